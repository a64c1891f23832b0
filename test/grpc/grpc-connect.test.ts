/**
 * connect-node (connect-es) as a client of the gRPC entry in its gRPC protocol (createGrpcTransport,
 * HTTP/2): the service descriptor is built at run time from the .proto (protobufjs makes the
 * FileDescriptorSet, @bufbuild/protobuf a registry from it), then unary, server and two-way streams and
 * an error status, over a real socket.
 */
import { createFileRegistry, type DescService, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { GREETER_PROTO, GreeterDef, greeterImpl, newSeen } from './greeter.js';

afterEach(closeAll);

function greeterService(): DescService {
  const root = protobuf.loadSync(GREETER_PROTO);
  // biome-ignore lint/suspicious/noExplicitAny: toDescriptor is added by protobufjs/ext/descriptor
  const set = (root as any).toDescriptor('proto3');
  const bytes = (descriptor as unknown as { FileDescriptorSet: protobuf.Type }).FileDescriptorSet.encode(
    set,
  ).finish();
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  return registry.getService('callisto.test.Greeter')!;
}

describe('gRPC entry: connect-node as the client (gRPC protocol)', () => {
  it('unary, server stream, two-way stream and an error status', async () => {
    const app = await testApp();
    app.provide(GreeterDef, greeterImpl(newSeen()));
    await app.start();
    const service = greeterService();
    const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${app.grpcPort}` });
    // biome-ignore lint/suspicious/noExplicitAny: a client of a descriptor built at run time
    const client = createClient(service, transport) as any;
    const reply = await client.sayHello({ name: 'connect' });
    expect(reply.message).toBe('hello connect');
    const counted: number[] = [];
    for await (const count of client.countTo({ n: 4 })) counted.push(count.value);
    expect(counted).toEqual([1, 2, 3, 4]);
    async function* values() {
      yield { value: 7 };
      yield { value: 8 };
    }
    const echoed: number[] = [];
    for await (const count of client.echo(values())) echoed.push(count.value);
    expect(echoed).toEqual([70, 80]);
    const failed = await client.fail({ code: 'RateLimited' }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ConnectError);
    expect((failed as ConnectError).code).toBe(Code.ResourceExhausted);
  });

  it('the Connect protocol (unary, binary) on the same port: an answer, a deadline and an error status', async () => {
    const app = await testApp();
    app.provide(GreeterDef, greeterImpl(newSeen()));
    await app.start();
    const transport = createConnectTransport({
      baseUrl: `http://127.0.0.1:${app.grpcPort}`,
      httpVersion: '2',
      useBinaryFormat: true,
    });
    // biome-ignore lint/suspicious/noExplicitAny: a client of a descriptor built at run time
    const client = createClient(greeterService(), transport) as any;
    expect((await client.sayHello({ name: 'connect-protocol' })).message).toBe('hello connect-protocol');
    const failed = await client.fail({ code: 'Unauthorized' }).catch((error: unknown) => error);
    expect((failed as ConnectError).code).toBe(Code.Unauthenticated);
    expect((failed as ConnectError).rawMessage).toBe('failed with Unauthorized');
    const late = await client.slow({ ms: 10_000 }, { timeoutMs: 300 }).catch((error: unknown) => error);
    expect((late as ConnectError).code).toBe(Code.DeadlineExceeded);
  });
});

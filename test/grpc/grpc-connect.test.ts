/**
 * connect-node (connect-es) as a client of the gRPC entry in each of its three protocols, over a real
 * socket (HTTP/2): gRPC (createGrpcTransport: unary, server and two-way streams, an error status),
 * Connect (unary: an answer, a deadline, an error status) and gRPC-Web (createGrpcWebTransport: unary,
 * a server stream, error statuses with their codes and Callisto's code in the trailers message, a
 * deadline; client and two-way streams, which gRPC-Web carries over HTTP/2). The service descriptor is built at run time from the .proto
 * (protobufjs makes the FileDescriptorSet, @bufbuild/protobuf a registry from it).
 */
import fs from 'node:fs';
import { createFileRegistry, type DescService, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from '@connectrpc/connect-node';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { GREETER_PROTO, GreeterDef, greeterImpl, newSeen } from './greeter.js';

afterEach(closeAll);

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());

const TOKEN = 'orders-secret-token-0123456789';

let greeter: DescService | undefined;

/** The Greeter's descriptor, built once from the .proto. */
function greeterService(): DescService {
  if (greeter !== undefined) return greeter;
  const root = protobuf.loadSync(GREETER_PROTO);
  // biome-ignore lint/suspicious/noExplicitAny: toDescriptor is added by protobufjs/ext/descriptor
  const set = (root as any).toDescriptor('proto3');
  const bytes = (descriptor as unknown as { FileDescriptorSet: protobuf.Type }).FileDescriptorSet.encode(
    set,
  ).finish();
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  greeter = registry.getService('callisto.test.Greeter')!;
  return greeter;
}

/** A provider of the Greeter (recording into `seen`); returns its gRPC entry's h2c address. */
async function startGreeter(seen = newSeen()): Promise<string> {
  const app = await testApp();
  app.provide(GreeterDef, greeterImpl(seen));
  await app.start();
  return `http://127.0.0.1:${app.grpcPort}`;
}

/** A connect-node client of the Greeter over `transport` (its descriptor built at run time: untyped). */
// biome-ignore lint/suspicious/noExplicitAny: a client of a descriptor built at run time
function greeterClient(transport: Transport): any {
  return createClient(greeterService(), transport);
}

describe('gRPC entry: connect-node as the client (gRPC protocol)', () => {
  it('unary, server stream, two-way stream and an error status', async () => {
    const baseUrl = await startGreeter();
    const client = greeterClient(createGrpcTransport({ baseUrl }));
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
    const baseUrl = await startGreeter();
    const transport = createConnectTransport({
      baseUrl,
      httpVersion: '2',
      useBinaryFormat: true,
    });
    const client = greeterClient(transport);
    expect((await client.sayHello({ name: 'connect-protocol' })).message).toBe('hello connect-protocol');
    const failed = await client.fail({ code: 'Unauthorized' }).catch((error: unknown) => error);
    expect((failed as ConnectError).code).toBe(Code.Unauthenticated);
    expect((failed as ConnectError).rawMessage).toBe('failed with Unauthorized');
    const late = await client.slow({ ms: 10_000 }, { timeoutMs: 300 }).catch((error: unknown) => error);
    expect((late as ConnectError).code).toBe(Code.DeadlineExceeded);
  });

  it('the gRPC-Web protocol on the same port: unary, a server stream, error codes, a deadline, trailers as the last message', async () => {
    const seen = newSeen();
    const baseUrl = await startGreeter(seen);
    // binary: the entry's +json is the JSON array of the arguments, not protobuf's JSON mapping
    const transport = createGrpcWebTransport({
      baseUrl,
      httpVersion: '2',
      useBinaryFormat: true,
    });
    const client = greeterClient(transport);
    expect((await client.sayHello({ name: 'grpc-web' })).message).toBe('hello grpc-web');
    const counted: number[] = [];
    for await (const count of client.countTo({ n: 5 })) counted.push(count.value);
    expect(counted).toEqual([1, 2, 3, 4, 5]);
    for (const [callisto, code] of [
      ['Unauthorized', Code.Unauthenticated],
      ['RateLimited', Code.ResourceExhausted],
      ['MethodNotFound', Code.Unimplemented],
    ] as const) {
      const failed = await client.fail({ code: callisto }).catch((error: unknown) => error);
      expect(failed, callisto).toBeInstanceOf(ConnectError);
      expect((failed as ConnectError).code, callisto).toBe(code);
      expect((failed as ConnectError).rawMessage).toBe(`failed with ${callisto}`);
      // Callisto's own code travels in the trailers message too
      expect((failed as ConnectError).metadata.get('callisto-code')).toBe(callisto);
    }
    const late = await client.slow({ ms: 10_000 }, { timeoutMs: 300 }).catch((error: unknown) => error);
    expect((late as ConnectError).code).toBe(Code.DeadlineExceeded);
    // the handler saw the deadline the client sent (grpc-timeout)
    expect(seen.deadlines.every((deadline) => deadline > 0)).toBe(true);
  });

  it('over HTTP/2, gRPC-Web carries client and two-way streams too', async () => {
    const baseUrl = await startGreeter();
    const transport = createGrpcWebTransport({
      baseUrl,
      httpVersion: '2',
    });
    const client = greeterClient(transport);
    async function* values() {
      yield { value: 1 };
      yield { value: 2 };
      yield { value: 3 };
    }
    expect((await client.sum(values())).total).toBe(6);
    const echoed: number[] = [];
    for await (const count of client.echo(values())) echoed.push(count.value);
    expect(echoed).toEqual([10, 20, 30]);
    expect((await client.sayHello({ name: 'after' })).message).toBe('hello after');
  });

  it('over TLS (ALPN h2) on the provider port, each protocol, with the authorization metadata reaching the auth filter', async () => {
    const app = await testApp({
      server: {
        tls: { key: pki.server.key, cert: pki.server.cert },
        auth: { tokens: { orders: TOKEN }, defaultAccess: 'allow' },
      },
    });
    app.provide(GreeterDef, greeterImpl(newSeen()));
    await app.start();
    const common = {
      baseUrl: `https://localhost:${app.grpcPort}`,
      httpVersion: '2' as const,
      nodeOptions: { ca: fs.readFileSync(pki.ca) },
    };
    for (const [name, transport] of [
      ['grpc', createGrpcTransport(common)],
      ['grpc-web', createGrpcWebTransport({ ...common, useBinaryFormat: true })],
      ['connect', createConnectTransport({ ...common, useBinaryFormat: true })],
    ] as const) {
      const client = greeterClient(transport);
      const headers = { authorization: `Bearer ${TOKEN}` };
      expect((await client.whoami({}, { headers })).message, name).toBe('token:orders');
      const refused = await client.whoami({}).catch((error: unknown) => error);
      expect((refused as ConnectError).code, name).toBe(Code.Unauthenticated);
    }
  });

  it('the Connect protocol’s streams: server, client and two-way, an error after messages, a deadline', async () => {
    const seen = newSeen();
    const baseUrl = await startGreeter(seen);
    const transport = createConnectTransport({
      baseUrl,
      httpVersion: '2',
      useBinaryFormat: true,
    });
    const client = greeterClient(transport);
    const counted: number[] = [];
    for await (const count of client.countTo({ n: 4 })) counted.push(count.value);
    expect(counted).toEqual([1, 2, 3, 4]);
    async function* values() {
      yield { value: 1 };
      yield { value: 2 };
      yield { value: 3 };
    }
    expect((await client.sum(values())).total).toBe(6);
    const echoed: number[] = [];
    for await (const count of client.echo(values())) echoed.push(count.value);
    expect(echoed).toEqual([10, 20, 30]);
    // a stream that outlives its deadline ends with deadline_exceeded after what it delivered
    const delivered: number[] = [];
    const late = await (async () => {
      for await (const count of client.countTo({ n: 1_000, delayMs: 50 }, { timeoutMs: 300 }))
        delivered.push(count.value);
    })().catch((error: unknown) => error);
    expect((late as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.length).toBeLessThan(1_000);
  });
});

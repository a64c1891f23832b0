/**
 * gRPC server reflection (v1 and v1alpha), queried with grpc-js over @grpc/reflection's own .proto
 * files: the services are listed, and the file containing a service is a FileDescriptorProto that
 * protobufjs reads back into the same service, methods and stream kinds, with its messages.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { GreeterDef, greeterImpl, newSeen } from './greeter.js';

const require = createRequire(import.meta.url);
const protoDir = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto');

// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients are typed by the loaded package
const clients: any[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

// biome-ignore lint/suspicious/noExplicitAny: the loaded package's shape
function reflectionClient(port: number, version: 'v1' | 'v1alpha'): any {
  const definition = protoLoader.loadSync(
    path.join(protoDir, `grpc/reflection/${version}/reflection.proto`),
    {
      keepCase: true,
      defaults: true,
      oneofs: true,
    },
  );
  // biome-ignore lint/suspicious/noExplicitAny: the loaded package's shape
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const client = new loaded.grpc.reflection[version].ServerReflection(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  clients.push(client);
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: a grpc-js client and its answers
function ask(client: any, request: object): Promise<any> {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (answer: unknown) => {
      resolve(answer);
      call.end();
    });
    call.on('error', reject);
    call.write(request);
  });
}

const FileDescriptorProto = (descriptor as unknown as { FileDescriptorProto: protobuf.Type })
  .FileDescriptorProto;

describe('gRPC entry: server reflection', () => {
  for (const version of ['v1', 'v1alpha'] as const) {
    it(`${version}: lists the services and describes one`, async () => {
      const app = await testApp();
      app.provide(GreeterDef, greeterImpl(newSeen()));
      await app.start();
      const client = reflectionClient(app.grpcPort!, version);
      const listed = await ask(client, { list_services: '' });
      const names = listed.list_services_response.service.map((s: { name: string }) => s.name);
      expect(names).toContain('callisto.test.Greeter');
      expect(names).toContain('grpc.health.v1.Health');

      const found = await ask(client, { file_containing_symbol: 'callisto.test.Greeter' });
      const files = found.file_descriptor_response.file_descriptor_proto.map((bytes: Buffer) =>
        FileDescriptorProto.toObject(FileDescriptorProto.decode(bytes), { defaults: false }),
      );
      const file = files[0];
      expect(file.package).toBe('callisto.test');
      const service = file.service.find((s: { name: string }) => s.name === 'Greeter');
      const methods = Object.fromEntries(
        service.method.map(
          (m: { name: string; inputType: string; clientStreaming?: boolean; serverStreaming?: boolean }) => [
            m.name,
            [m.inputType, m.clientStreaming === true, m.serverStreaming === true],
          ],
        ),
      );
      expect(methods.sayHello).toEqual(['.callisto.test.HelloRequest', false, false]);
      expect(methods.countTo).toEqual(['.callisto.test.CountRequest', false, true]);
      expect(methods.sum).toEqual(['.callisto.test.Count', true, false]);
      expect(methods.echo).toEqual(['.callisto.test.Count', true, true]);
      const messages = file.messageType.map((m: { name: string }) => m.name).sort();
      expect(messages).toEqual(
        [
          'CountRequest',
          'Count',
          'Empty',
          'FailRequest',
          'HelloReply',
          'HelloRequest',
          'SlowRequest',
          'Total',
        ].sort(),
      );
      // the descriptor is a real one: protobufjs builds the service back from it
      // biome-ignore lint/suspicious/noExplicitAny: fromDescriptor is added by protobufjs/ext/descriptor
      const rebuilt = (protobuf.Root as any).fromDescriptor({
        file: [FileDescriptorProto.decode(found.file_descriptor_response.file_descriptor_proto[0])],
      });
      expect(
        rebuilt.lookupType('callisto.test.CountRequest').fieldsArray.map((f: { id: number }) => f.id),
      ).toEqual([1, 2]);

      const missing = await ask(client, { file_containing_symbol: 'nobody.Else' });
      expect(missing.error_response.error_code).toBe(grpc.status.NOT_FOUND);
    });
  }
});

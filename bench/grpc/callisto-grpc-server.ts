/**
 * Callisto's gRPC entry in the gRPC bench: the provider of bench/systems/callisto-protobuf (the bench
 * service with its bench.proto messages), defaults otherwise — gRPC on the provider's own port,
 * recognised by the HTTP/2 preface, every provider filter on, as a user gets it; the same port serves
 * Callisto's own protocol (with the protobuf serializer) for the consumer rows.
 */
import { callisto, createProtobufSerializer } from '../../src/index.js';
import { benchService } from '../lib/scenarios.js';
import { runServerMain } from '../lib/server-main.js';
import { ProtobufBenchServiceDef } from '../systems/callisto-protobuf/service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-grpc-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    // the protobuf serializer for the consumer over Callisto's own protocol (client.ts callisto-wire)
    extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
  });
  app.provide(ProtobufBenchServiceDef, benchService);
  await app.start();
  return { port: app.grpcPort!, close: () => app.close() };
});

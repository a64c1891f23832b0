/**
 * A Callisto provider serving the bench service over the framed protocol, accepting protobuf bodies
 * (the protobuf serializer registered, the service declaring its messages in bench.proto). Compare with
 * callisto (msgpack, the default).
 */
import { callisto, createProtobufSerializer } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { ProtobufBenchServiceDef } from './service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
  });
  app.provide(ProtobufBenchServiceDef, benchService);
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

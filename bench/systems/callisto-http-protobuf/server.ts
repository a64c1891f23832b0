/**
 * A Callisto provider serving the bench service on its HTTP entry with protobuf bodies (the service
 * declares its messages, bench.proto). Compare with callisto-http (the same entry, JSON bodies); callisto-protobuf is protobuf over TCP.
 */
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { ProtobufBenchServiceDef } from '../callisto-protobuf/service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    server: { http: { port: 0 } },
  });
  app.provide(ProtobufBenchServiceDef, benchService);
  await app.start();
  return { port: app.httpPort!, close: () => app.close() };
});

/** Callisto's bench client with the protobuf serializer: a direct reference, the full consumer call path. */
import { callisto, createProtobufSerializer } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { ProtobufBenchServiceDef } from './service.js';

await runClientMain(async (port) => {
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
  });
  const ref = app.refer(ProtobufBenchServiceDef, {
    url: `127.0.0.1:${port}`,
    timeoutMs: 30_000,
    serializer: 'protobuf',
  });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

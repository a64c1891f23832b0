/** The callisto client with its token (`consumer.credentials`), presented once per connection. */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';
import { BENCH_TOKEN } from './token.js';

await runClientMain(async (port) => {
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    consumer: { credentials: BENCH_TOKEN },
  });
  const ref = app.refer(BenchServiceDef, { url: `127.0.0.1:${port}`, timeoutMs: 30_000 });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

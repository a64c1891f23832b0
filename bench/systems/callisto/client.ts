/** Callisto's bench client: a direct reference (one provider, the full consumer call path), streams on the same connection. */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchStreamingServiceDef } from './service.js';

await runClientMain(async (port) => {
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const ref = app.refer(BenchStreamingServiceDef, { url: `127.0.0.1:${port}`, timeoutMs: 30_000 });
  return {
    say: (msg) => ref.say(msg),
    getUser: (id) => ref.getUser(id),
    ticks: (count) => ref.ticks(count),
    close: () => app.close(),
  };
});

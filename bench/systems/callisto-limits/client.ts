/**
 * Callisto's bench client with the consumer's limits configured but not limiting (rate and actives on
 * the reference). It does not send its application (`consumer.sendApplication`): the provider's
 * per-application limit keys on the authenticated identity, as with auth on, here the shared bucket of
 * callers that name none. (Naming the application costs one attachment per call; docs/governance.md.)
 */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';

await runClientMain(async (port) => {
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const ref = app.refer(BenchServiceDef, {
    url: `127.0.0.1:${port}`,
    timeoutMs: 30_000,
    limits: { rate: { perSecond: 1e9, burst: 1e9 }, actives: 1e6 },
  });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

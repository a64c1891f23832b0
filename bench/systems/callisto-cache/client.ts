/**
 * Callisto's bench client with a result cache on both methods (`cache: { ttlMs: 60000, max: 1000 }`).
 * S1 and S3 call say("test") again and again: after the first call every call is a hit (what a hit
 * costs). S2 calls getUser(i) with a new i each time: every call is a miss (what a miss adds).
 */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';

const CACHE = { ttlMs: 60_000, max: 1_000 };

await runClientMain(async (port) => {
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const ref = app.refer(BenchServiceDef, {
    url: `127.0.0.1:${port}`,
    timeoutMs: 30_000,
    methods: { say: { cache: CACHE }, getUser: { cache: CACHE } },
  });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

/**
 * Callisto's bench server with every provider limit configured but none limiting: rate limits for the
 * app, per consumer application and per remote host (token buckets far above any rate reached), and
 * executes on both methods. Against `callisto`, the cost of the limit filters.
 */
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';

const NEVER = { perSecond: 1e9, burst: 1e9 };

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    server: { limits: { rate: NEVER, perApplication: NEVER, perAddress: NEVER } },
  });
  app.provide(BenchServiceDef, benchService, {
    methods: { say: { limits: { executes: 1e6 } }, getUser: { limits: { executes: 1e6 } } },
  });
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

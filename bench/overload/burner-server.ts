/**
 * The provider of the overload benchmark (the harness protocol of lib/server-main.ts): `bench.Overload`
 * with the adaptive concurrency limit on, or off with BENCH_ADAPTIVE_LIMIT=0.
 */
import { appInternals } from '../../src/app/internals.js';
import { callisto } from '../../src/index.js';
import { runServerMain } from '../lib/server-main.js';
import { BURN_MS, OverloadBenchDef, spin } from './overload-service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-overload',
    logLevel: 'warn',
    server: { adaptiveLimit: process.env['BENCH_ADAPTIVE_LIMIT'] !== '0' },
    load: { configFile: false, env: false },
  });
  app.provide(OverloadBenchDef, {
    async burn(n) {
      await new Promise((resolve) => setImmediate(resolve));
      spin(BURN_MS);
      return n;
    },
    async limiter() {
      const limiter = appInternals(app).provider.limiter;
      return limiter === undefined
        ? { on: false, limit: 0, admitted: 0, refused: 0, overloaded: false }
        : {
            on: true,
            limit: limiter.limit,
            admitted: limiter.admitted,
            refused: limiter.refused,
            overloaded: limiter.overloaded,
          };
    },
  });
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

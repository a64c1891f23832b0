/**
 * The provider of the overload benchmark (the harness protocol of lib/server-main.ts): `bench.Overload`
 * with the adaptive concurrency limit on, or off with BENCH_ADAPTIVE_LIMIT=0; its admin endpoints on a
 * free port. BENCH_BURN_FACTOR=3 makes it a slowed provider: each call burns 3 × BURN_MS of CPU (the
 * balancing scenario, balance-run.ts). Hooks count the burn calls that reached the provider's chain and those whose arguments were
 * decoded (right after `decode`).
 */
import { appInternals } from '../../src/app/internals.js';
import { callisto, defineFilter } from '../../src/index.js';
import { runServerMain } from '../lib/server-main.js';
import { BURN_MS, OverloadBenchDef, spin } from './overload-service.js';

const burnMs = BURN_MS * (Number(process.env['BENCH_BURN_FACTOR'] ?? '1') || 1);
let arrived = 0;
let decoded = 0;
let executed = 0;
/** Before deadline-aware admission and the adaptive limit: every call that reached the provider. */
const arrivalProbe = defineFilter({
  name: 'bench-arrival-probe',
  position: 'provider',
  order: 160,
  start(invocation) {
    if (invocation.method !== 'limiter') arrived++;
  },
});
const decodeProbe = defineFilter({
  name: 'bench-decode-probe',
  position: 'provider',
  order: 355,
  start(invocation) {
    if (invocation.method !== 'limiter') decoded++;
  },
});

async function burn(n: number): Promise<number> {
  executed++;
  await new Promise((resolve) => setImmediate(resolve));
  spin(burnMs);
  return n;
}

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-overload',
    logLevel: 'warn',
    admin: { enabled: true, port: 0 },
    server: { adaptiveLimit: process.env['BENCH_ADAPTIVE_LIMIT'] !== '0' },
    filters: { provider: [arrivalProbe, decodeProbe] },
    load: { configFile: false, env: false },
  });
  app.provide(OverloadBenchDef, {
    burn,
    burnSheddable: burn,
    async limiter() {
      const limiter = appInternals(app).provider.limiter;
      const counts = { arrived, decoded, executed, adminPort: app.adminPort ?? 0 };
      return limiter === undefined
        ? { on: false, limit: 0, admitted: 0, refused: 0, overloaded: false, ...counts }
        : {
            on: true,
            limit: limiter.limit,
            admitted: limiter.admitted,
            refused: limiter.refused,
            overloaded: limiter.overloaded,
            ...counts,
          };
    },
  });
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

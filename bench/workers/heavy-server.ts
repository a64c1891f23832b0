/**
 * The provider of the worker benchmark: `crunch` on the loop (BENCH_EXECUTOR=loop, default) or in a
 * pool of worker threads (BENCH_EXECUTOR=worker; BENCH_THREADS threads, default the executor's: cores - 1);
 * `ping` always on the loop.
 */
import { callisto } from '../../src/index.js';
import { runServerMain } from '../lib/server-main.js';
import { HeavyBenchDef, heavyBench } from './heavy-service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-heavy',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const worker = process.env['BENCH_EXECUTOR'] === 'worker';
  app.provide(
    HeavyBenchDef,
    heavyBench,
    worker
      ? {
          methods: {
            crunch: {
              executor: {
                kind: 'worker',
                module: new URL('./heavy-service.ts', import.meta.url),
                export: 'heavyBench',
                ...(process.env['BENCH_THREADS'] ? { threads: Number(process.env['BENCH_THREADS']) } : {}),
                queue: 1_024,
              },
            },
          },
        }
      : {},
  );
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

/**
 * A provider served by `workers` processes (`server.workers`; 1: this process alone). The script runs
 * in the primary and in each worker: a worker only serves (its primary stops it); the primary speaks
 * the harness protocol. The harness's server CPU covers the primary and its workers (the process tree).
 * With CPU pinning the workers inherit the server's CPU: run with BENCH_PIN=0 to let them spread.
 */
import cluster from 'node:cluster';
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';

export async function runWorkersServer(workers: number): Promise<void> {
  const start = async () => {
    const app = await callisto({
      application: 'bench-server',
      logLevel: 'warn',
      server: { workers },
      load: { configFile: false, env: false },
    });
    app.provide(BenchServiceDef, benchService);
    return app.start();
  };
  if (cluster.isWorker) {
    await start();
    return;
  }
  await runServerMain(async () => {
    const app = await start();
    return { port: app.port!, close: () => app.close() };
  });
}

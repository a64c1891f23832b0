/**
 * Callisto's bench server and client with a variant of the app options (metrics off, tracing with an
 * SDK, …): the systems under bench/systems/callisto-* other than callisto itself measure what one
 * observability setting costs against the default.
 */
import { type AppOptions, callisto } from '../../src/index.js';
import { BenchServiceDef } from '../systems/callisto/service.js';
import { runClientMain } from './client-main.js';
import { benchService } from './scenarios.js';
import { runServerMain } from './server-main.js';

const QUIET: AppOptions = { logLevel: 'warn', load: { configFile: false, env: false } };

export async function variantServer(options: AppOptions): Promise<void> {
  await runServerMain(async () => {
    const app = await callisto({ application: 'bench-server', ...QUIET, ...options });
    app.provide(BenchServiceDef, benchService);
    await app.start();
    return { port: app.port!, close: () => app.close() };
  });
}

export async function variantClient(options: AppOptions): Promise<void> {
  await runClientMain(async (port) => {
    const app = await callisto({ application: 'bench-client', ...QUIET, ...options });
    const ref = app.refer(BenchServiceDef, { url: `127.0.0.1:${port}`, timeoutMs: 30_000 });
    return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
  });
}

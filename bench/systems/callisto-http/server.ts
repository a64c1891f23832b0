/**
 * A Callisto provider serving the bench service on its HTTP/JSON entry (`server.http`): every call goes
 * through the provider's filter chain and limits, as a call over TCP does.
 */
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    server: { http: { port: 0 } },
  });
  app.provide(BenchServiceDef, benchService);
  await app.start();
  return { port: app.httpPort!, close: () => app.close() };
});

/** Callisto's bench server: one provider app serving the bench service with the default serializer. */
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from './service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  app.provide(BenchServiceDef, benchService);
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

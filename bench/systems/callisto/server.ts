/** Callisto's bench server: one provider app serving the bench service (with its `ticks` stream and `echoBytes`) with the default serializer. */
import { callisto } from '../../../src/index.js';
import { benchBytesService, benchService, benchStreamService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchStreamingServiceDef } from './service.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  app.provide(BenchStreamingServiceDef, { ...benchService, ...benchStreamService, ...benchBytesService });
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

/**
 * The callisto system with authentication and access rules configured but not limiting: shared-secret
 * tokens for two applications, rules that allow the bench client (and deny another), default deny. The
 * cost against the bare callisto system is the `auth` and `access` filters on every call.
 */
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';
import { BENCH_TOKEN } from './token.js';

await runServerMain(async () => {
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    server: {
      auth: {
        tokens: { 'bench-client': BENCH_TOKEN, other: 'other-application-token-0123456789' },
        defaultAccess: 'deny',
        rules: [
          { service: BenchServiceDef.name, allow: ['bench-client'] },
          { service: BenchServiceDef.name, method: 'getUser', deny: ['other'] },
        ],
      },
    },
  });
  app.provide(BenchServiceDef, benchService);
  await app.start();
  return { port: app.port!, close: () => app.close() };
});

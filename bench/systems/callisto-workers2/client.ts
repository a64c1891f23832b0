/**
 * The client of the `server.workers` systems: four consumer apps (four connections, which the
 * provider's primary hands to its workers round robin), calls spread over them in turn.
 */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';

const CONNECTIONS = 4;

await runClientMain(async (port) => {
  const apps = await Promise.all(
    Array.from({ length: CONNECTIONS }, () =>
      callisto({ application: 'bench-client', logLevel: 'warn', load: { configFile: false, env: false } }),
    ),
  );
  const refs = apps.map((app) => app.refer(BenchServiceDef, { url: `127.0.0.1:${port}`, timeoutMs: 30_000 }));
  let next = 0;
  const pick = () => refs[next++ % CONNECTIONS]!;
  return {
    say: (msg) => pick().say(msg),
    getUser: (id) => pick().getUser(id),
    close: async () => {
      await Promise.all(apps.map((app) => app.close()));
    },
  };
});

/**
 * Callisto's bench client: a direct reference (one provider, the full consumer call path), streams
 * and `echoBytes` on the same connection. S5 asks for several connections: one consumer app per
 * connection (an app's pool keeps one connection per address), calls over them in turn.
 */
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchStreamingServiceDef } from './service.js';

await runClientMain(async (port, { connections }) => {
  const apps = await Promise.all(
    Array.from({ length: connections }, () =>
      callisto({ application: 'bench-client', logLevel: 'warn', load: { configFile: false, env: false } }),
    ),
  );
  const refs = apps.map((app) =>
    app.refer(BenchStreamingServiceDef, { url: `127.0.0.1:${port}`, timeoutMs: 30_000 }),
  );
  const ref = refs[0]!;
  let next = 0;
  const pick = connections === 1 ? () => ref : () => refs[next++ % connections]!;
  return {
    connections,
    say: (msg) => pick().say(msg),
    getUser: (id) => pick().getUser(id),
    echoBytes: (data) => pick().echoBytes(data),
    ticks: (count) => ref.ticks(count),
    close: async () => {
      await Promise.all(apps.map((app) => app.close()));
    },
  };
});

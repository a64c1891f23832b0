/**
 * O3's provider (the harness protocol of lib/server-main.ts): a Moleculer node serving `burner.burn`,
 * the same work as Callisto's `bench.Overload.burn` (one turn of the event loop, then the CPU cost), and
 * `burner.counts` (the burn calls that reached the provider). Moleculer's defaults: no bulkhead, no
 * rate limit, no circuit breaker. The port is the one BENCH_MOLECULER_PORTS gives the server node.
 */
import { runServerMain } from '../lib/server-main.js';
import { moleculerBroker, portsFromEnv } from './moleculer-peer.js';
import { BURN_MS, spin } from './overload-service.js';

const burnMs = BURN_MS * (Number(process.env['BENCH_BURN_FACTOR'] ?? '1') || 1);
let arrived = 0;

await runServerMain(async () => {
  const ports = portsFromEnv();
  const broker = moleculerBroker('server', ports);
  broker.createService({
    name: 'burner',
    actions: {
      async burn(ctx) {
        arrived++;
        await new Promise((resolve) => setImmediate(resolve));
        spin(burnMs);
        return ctx.params['i'];
      },
      counts: () => ({ arrived }),
    },
  });
  await broker.start();
  return { port: ports.serverPort, close: () => broker.stop() };
});

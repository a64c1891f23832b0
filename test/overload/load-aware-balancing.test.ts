/**
 * Load-aware balancing (issue 28) over real sockets: a provider's load report (`callisto-load`) reaches
 * the consumer's view of the endpoint (its limit, as `/stats` shows it), and with three provider
 * processes, one slowed to 3x the CPU per call, `p2c` sends the slowed one a clearly smaller share of an
 * open loop than an even split. Each provider counts what it executed itself.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { choosePinning } from '../../bench/lib/processes.js';
import {
  type BalanceProvider,
  describeBalance,
  nominalCapacity,
  runBalance,
  startBalanceProviders,
} from '../../bench/overload/balance-run.js';
import { callisto, defineService } from '../../src/index.js';

const quiet = { logLevel: 'warn', load: { configFile: false, env: false } } as const;
const HiDef = defineService<{ hi(n: number): Promise<number> }>('test.LoadHi', { methods: { hi: {} } });

interface EndpointView {
  address: string;
  peakLatencyMs: number;
  load?: { inflight: number; limit: number; queued: number; loopDelayMs: number; overloaded: boolean };
}

describe('load reports', () => {
  it("reach the consumer's view of the endpoint: the provider's limit, its calls in flight", async () => {
    const provider = await callisto({
      ...quiet,
      application: 'load-p',
      server: { adaptiveLimitInitial: 777 },
    });
    const consumer = await callisto({ ...quiet, application: 'load-c', admin: { enabled: true, port: 0 } });
    try {
      provider.provide(HiDef, { hi: async (n) => n });
      await provider.start();
      const ref = consumer.refer(HiDef, { url: provider.address!, loadbalance: 'p2c' });
      await consumer.start();
      for (let i = 0; i < 10; i++) await ref.hi(i);
      const stats = (await (await fetch(`http://127.0.0.1:${consumer.adminPort}/stats`)).json()) as {
        endpoints: EndpointView[];
      };
      const view = stats.endpoints.find((e) => e.address.endsWith(`:${provider.port}`));
      expect(view?.load).toMatchObject({ limit: 777, queued: 0, overloaded: false });
      expect(view!.load!.inflight).toBeGreaterThanOrEqual(0);
      expect(view!.peakLatencyMs).toBeGreaterThan(0);
    } finally {
      await consumer.close();
      await provider.close();
    }
  });
});

describe('a slowed provider among three', () => {
  let providers: BalanceProvider[] = [];
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.running.stop()));
  });

  it('gets a clearly smaller share from p2c than an even split (3x the CPU per call)', async () => {
    providers = await startBalanceProviders([1, 1, 3], choosePinning(true));
    const rate = nominalCapacity(providers) * 0.3;
    // a loaded machine can blur one round: up to three, passing when one shows the slowed one shunned
    let slowedShare = 1;
    for (let round = 0; round < 3 && slowedShare >= 0.2; round++) {
      const app = await callisto({ ...quiet, application: `balance-${round}` });
      try {
        await app.start();
        const run = await runBalance(app, providers, {
          balancer: 'p2c',
          ratePerSec: rate,
          durationMs: 2_000,
        });
        console.log(describeBalance(run, providers));
        expect(run.executed.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
        slowedShare = run.shares[2]!;
      } finally {
        await app.close();
      }
    }
    // an even split gives it a third; by capacity it would get 14 %
    expect(slowedShare).toBeLessThan(0.2);
  }, 120_000);
});

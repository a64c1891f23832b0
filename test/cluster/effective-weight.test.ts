/**
 * Effective weights over real sockets: of two providers, one fails 3 of every 10 reads it gets
 * (Overloaded: a provider failure, retried on the other since `read` is idempotent). The consumer
 * learns: that provider's share of the traffic falls clearly, `/stats` shows its lowered effective
 * weight, and once it recovers its share comes back. Driven by counts of calls, not time: with
 * round robin the figures are exact, with random (the default) they are bounded with wide headroom.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallistoApp } from '../../src/index.js';
import { RpcError } from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

/** Fails reads 1, 4 and 7 of every 10 it receives while `failing`. */
class ThirtyPercentImpl extends FlakyImpl {
  failing = true;
  #received = 0;

  override async read(key: string): Promise<string> {
    const n = this.#received++ % 10;
    if (this.failing && (n === 1 || n === 4 || n === 7)) {
      this.reads++;
      throw new RpcError('Overloaded', `${this.name} fails this one`);
    }
    return super.read(key);
  }
}

async function provider(impl: FlakyImpl): Promise<CallistoApp> {
  const app = await testApp({ application: impl.name });
  app.provide(FlakyDef, impl);
  await app.start();
  return app;
}

interface EndpointWeight {
  address: string;
  weight: number;
  weightFactor: number;
  effectiveWeight: number;
}

async function weights(app: CallistoApp): Promise<EndpointWeight[]> {
  const response = await fetch(`http://127.0.0.1:${app.adminPort}/stats`);
  return ((await response.json()) as { endpoints: EndpointWeight[] }).endpoints;
}

async function setup(loadbalance: 'roundrobin' | 'random' | 'leastactive', effectiveWeight = true) {
  const steady = new FlakyImpl('steady');
  const flaky = new ThirtyPercentImpl('flaky');
  const [steadyApp, flakyApp] = [await provider(steady), await provider(flaky)];
  const consumer = await testApp({
    application: 'consumer',
    admin: { enabled: true },
    // No warm-up (the providers just started) and no ejection: the share measured is effective weights'.
    consumer: { warmupMs: 0, outlierDetection: false, effectiveWeight },
  });
  const ref = consumer.refer(FlakyDef, { url: [steadyApp.address!, flakyApp.address!], loadbalance });
  await consumer.start();
  /** Makes `count` reads (all must succeed) and returns the share of them `flaky` answered. */
  const flakyShare = async (count: number): Promise<number> => {
    let served = 0;
    for (let i = 0; i < count; i++) if ((await ref.read(`k${i}`)).startsWith('flaky:')) served++;
    return served / count;
  };
  return { consumer, flaky, flakyAddress: flakyApp.address!, flakyShare };
}

describe('effective weights', () => {
  it.each(['roundrobin', 'random', 'leastactive'] as const)(
    '%s: a provider failing 3 calls in 10 loses its share, and wins it back once it recovers',
    async (loadbalance) => {
      const { consumer, flaky, flakyAddress, flakyShare } = await setup(loadbalance);
      // Learning (every call still succeeds: failover takes the failed reads to the other provider).
      await flakyShare(100);
      // Full weight would give it half the attempts and 35% of the answers; the floor (a tenth) about 6%.
      expect(await flakyShare(300)).toBeLessThan(0.15);
      const lowered = (await weights(consumer)).find((e) => e.address === flakyAddress)!;
      expect(lowered.weight).toBe(100);
      expect(lowered.effectiveWeight).toBeLessThan(50);
      expect(lowered.weightFactor).toBeLessThan(0.5);

      flaky.failing = false;
      // Each success restores a step: about 160 calls bring it from the floor back to full.
      await flakyShare(600);
      expect(await flakyShare(300)).toBeGreaterThan(0.4);
      const restored = (await weights(consumer)).find((e) => e.address === flakyAddress)!;
      expect(restored).toMatchObject({ weight: 100, weightFactor: 1, effectiveWeight: 100 });
    },
    30_000,
  );

  it('consumer.effectiveWeight: false keeps the full share of a flaky provider', async () => {
    const { consumer, flakyAddress, flakyShare } = await setup('roundrobin', false);
    await flakyShare(100);
    // Half the attempts, 30% of which fail over: 35% of the answers.
    expect(await flakyShare(300)).toBeCloseTo(0.35, 2);
    const endpoint = (await weights(consumer)).find((e) => e.address === flakyAddress)!;
    expect(endpoint.effectiveWeight).toBe(100);
  });
});

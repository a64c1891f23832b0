/**
 * The provider's adaptive concurrency limit (issue 28), in one process over real sockets: what it learns
 * from (calls that end in an RpcError are not samples), what is not overload and is admitted whole
 * (a burst of 250 slow calls at once on an idle provider, a closed loop of 500 callers of a fast method
 * — what kept the limit off by default before its overload gate), and the priority option's checks.
 * Under overload (open loop, provider in its own process): open-loop-overload.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineService, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

const limiterOf = (app: CallistoApp) => appInternals(app).provider.limiter!;

describe('what the limit learns from', () => {
  interface Failing {
    /** Waits `ms` (no CPU), then answers, or throws an RpcError when `fail`. */
    run(fail: boolean, ms: number): Promise<boolean>;
  }
  const FailingDef = defineService<Failing>('test.Failing', { methods: { run: {} } });

  it("calls that end in an RpcError (refusals, timeouts, a handler's RpcError) are not samples", async () => {
    const app = await testApp({ application: 'failing', server: { adaptiveLimit: true } });
    app.provide(FailingDef, {
      async run(fail, ms) {
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (fail) throw new RpcError('Overloaded', 'not now');
        return true;
      },
    });
    await app.start();
    const consumer = await testApp({ application: 'load' });
    const ref = consumer.refer(FailingDef, {
      url: app.address!,
      retries: 0,
      timeoutMs: 5_000,
      adaptiveThrottling: false,
      outlierDetection: false,
    });
    // fast calls set the long latency; then waves of 100 calls in flight together, each ~150 ms,
    // failing with an RpcError: counted, they would be a queue and bring the limit down to ~100
    for (let w = 0; w < 3; w++) await Promise.all(Array.from({ length: 100 }, () => ref.run(false, 0)));
    for (let w = 0; w < 3; w++) {
      await Promise.allSettled(Array.from({ length: 100 }, () => ref.run(true, 150)));
    }
    // no window of the limit saw them: its last latency is still the fast calls' (the limit itself may
    // have been brought down by the overload gate, on a machine loaded enough to look saturated)
    expect(limiterOf(app).shortRttMs).toBeLessThan(100);
    // the same waves answered: the limit learns from them
    for (let w = 0; w < 3; w++) {
      await Promise.allSettled(Array.from({ length: 100 }, () => ref.run(false, 150)));
    }
    expect(limiterOf(app).shortRttMs).toBeGreaterThanOrEqual(100);
    expect(limiterOf(app).limit).toBeLessThan(200);
  });
});

interface Burner {
  /** Waits a turn of the event loop, burns BURN_MS of CPU, answers `n`. */
  burn(n: number): Promise<number>;
  /** Answers `n` at once. */
  fast(n: number): Promise<number>;
}
const BurnerDef = defineService<Burner>('test.OpenLoopBurner', { methods: { burn: {}, fast: {} } });
const BURN_MS = 4;

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // burning CPU on purpose
  }
}

async function provider(): Promise<CallistoApp> {
  const app = await testApp({ application: 'burner' });
  app.provide(BurnerDef, {
    async burn(n) {
      await new Promise((resolve) => setImmediate(resolve));
      spin(BURN_MS);
      return n;
    },
    async fast(n) {
      return n;
    },
  });
  await app.start();
  return app;
}

async function consumerOf(app: CallistoApp, timeoutMs: number) {
  const consumer = await testApp({ application: 'load' });
  return consumer.refer(BurnerDef, { url: app.address!, retries: 0, timeoutMs });
}

describe('what is not overload is admitted whole', () => {
  it('a burst of 250 calls at once on an idle provider: nothing refused', async () => {
    const app = await provider();
    const ref = await consumerOf(app, 15_000);
    await Promise.all(Array.from({ length: 20 }, () => ref.burn(0)));
    const settled = await Promise.allSettled(Array.from({ length: 250 }, (_, i) => ref.burn(i)));
    const failed = settled.filter((s) => s.status === 'rejected').map((s) => String(s.reason));
    const limiter = appInternals(app).provider.limiter!;
    console.log(
      `[burst] failed=${failed.length} limit=${limiter.limit} overloaded=${limiter.overloaded} ${failed[0] ?? ''}`,
    );
    expect(failed).toEqual([]);
    expect(limiter.refused).toBe(0);
  }, 30_000);

  it('a closed loop of 500 callers of a fast method for 3 s (500 in flight, all the time): nothing refused', async () => {
    const app = await provider();
    const ref = await consumerOf(app, 15_000);
    const failed: string[] = [];
    let done = 0;
    const until = performance.now() + 3_000;
    await Promise.all(
      Array.from({ length: 500 }, async () => {
        while (performance.now() < until) {
          await ref.fast(0).then(
            () => done++,
            (error: unknown) => failed.push(String(error)),
          );
        }
      }),
    );
    const limiter = appInternals(app).provider.limiter!;
    console.log(
      `[closed] done=${done} failed=${failed.length} limit=${limiter.limit} overloaded=${limiter.overloaded} ${failed[0] ?? ''}`,
    );
    expect(failed).toEqual([]);
    expect(limiter.refused).toBe(0);
  }, 30_000);
});

interface Priority {
  burn(n: number, ms: number): Promise<number>;
}
const PriorityDef = defineService<Priority>('test.Priority', { methods: { burn: {} } });

describe('priorities', () => {
  it('refuses an unknown priority in defineService and in withOptions, naming the key', async () => {
    const consumer = await testApp({ application: 'load' });
    const ref = consumer.refer(PriorityDef, { url: '127.0.0.1:1' });
    expect(() => withOptions(ref, { priority: 'urgent' as never }).burn(1, 0)).toThrow(
      /withOptions\(\)\.priority.*critical, default, sheddable/,
    );
    expect(() =>
      defineService<Priority>('test.Wrong', { methods: { burn: { priority: 'urgent' as never } } }),
    ).toThrow(/defineService\(test\.Wrong\)\.methods\.burn\.priority.*critical, default, sheddable/);
  });
});

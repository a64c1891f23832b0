/**
 * The provider's adaptive concurrency limit (issue 28), over real sockets: a provider whose method
 * burns ~5 ms of CPU (after yielding once, as a handler that awaits I/O does, so that calls are in
 * flight together), offered waves of 200 concurrent calls, learns a limit well below 200 and refuses the
 * excess `Overloaded` (`details.shed: 'limit'`) before decoding — a probe right after `decode` and the
 * handler count what was decoded and run — while the calls it admits, with 5 s deadlines, succeed.
 * Switched off, every call is admitted. Priorities: under the same overload sheddable calls are refused
 * far more often than critical ones, which mostly succeed. The limit, the calls in flight and the
 * refusals are on /metrics and /stats. Timings are wide: nothing is asserted about latency.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runOpenLoop } from '../../bench/lib/open-loop.js';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineFilter, defineService, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus } from '../support/prometheus-text.js';

afterEach(closeAll);

interface Burner {
  /** Yields once, then burns `ms` of CPU synchronously, and answers `n`. */
  burn(n: number, ms: number): Promise<number>;
}

const BurnerDef = defineService<Burner>('test.Burner', { methods: { burn: {} } });
const SheddableDef = defineService<Burner>('test.SheddableBurner', {
  methods: { burn: { priority: 'sheddable' } },
});

const BURN_MS = 5;

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // burning CPU on purpose
  }
}

async function burner(server: Record<string, unknown> = { adaptiveLimit: true }, definition = BurnerDef) {
  let decoded = 0;
  let executed = 0;
  const decodeProbe = defineFilter({
    name: 'test-decode-probe',
    position: 'provider',
    order: 355,
    start() {
      decoded++;
    },
  });
  const app = await testApp({
    application: 'burner',
    admin: { enabled: true },
    server,
    filters: { provider: [decodeProbe] },
  });
  app.provide(definition, {
    async burn(n, ms) {
      executed++;
      await new Promise((resolve) => setImmediate(resolve));
      spin(ms);
      return n;
    },
  });
  await app.start();
  return { app, decoded: () => decoded, executed: () => executed };
}

interface Outcomes {
  ok: number;
  limit: number;
  other: string[];
}

/**
 * Twice the method's capacity (2 × 1000 / BURN_MS calls/s: its capacity is lower than that, so this is
 * at least twice it) for `durationMs`, open loop: calls start at that rate whatever happened to the
 * ones before.
 */
async function overload(
  call: (i: number) => Promise<unknown>,
  durationMs = 3_000,
  outcomes: Outcomes = { ok: 0, limit: 0, other: [] },
): Promise<Outcomes> {
  await runOpenLoop({
    call: (i) =>
      call(i).then(
        () => {
          outcomes.ok++;
        },
        (error: unknown) => {
          if (RpcError.is(error) && error.details['shed'] === 'limit') {
            expect(error.code).toBe('Overloaded');
            outcomes.limit++;
          } else outcomes.other.push(String(error));
        },
      ),
    ratePerSec: (2 * 1000) / BURN_MS,
    durationMs,
    deadlineMs: 5_000,
    isRefusal: () => false,
  });
  return outcomes;
}

async function consumerOf(app: CallistoApp, definition = BurnerDef) {
  const consumer = await testApp({ application: 'load' });
  // no local throttling, no retries: every call reaches the provider once
  return consumer.refer(definition, {
    url: app.address!,
    retries: 0,
    timeoutMs: 5_000,
    adaptiveThrottling: false,
  });
}

const limiterOf = (app: CallistoApp) => appInternals(app).provider.limiter!;

describe('the adaptive concurrency limit', () => {
  it('under twice its capacity learns a limit below 100 and refuses the excess Overloaded before decoding; admitted calls succeed', async () => {
    const p = await burner();
    const ref = await consumerOf(p.app);
    expect(limiterOf(p.app).limit).toBe(10_000);
    const outcomes = await overload((i) => ref.burn(i, BURN_MS));
    const offered = outcomes.ok + outcomes.limit + outcomes.other.length;

    const limit = limiterOf(p.app).limit;
    expect(limit).toBeLessThan(100);
    expect(limit).toBeGreaterThanOrEqual(20);
    expect(outcomes.limit).toBeGreaterThan(offered * 0.2);
    // refused calls were neither decoded nor run
    const admitted = offered - outcomes.limit;
    expect(p.executed()).toBe(admitted);
    expect(p.decoded()).toBe(admitted);
    expect(limiterOf(p.app).admitted).toBe(admitted);
    // the admitted calls (5 s deadlines) succeed
    expect(outcomes.ok).toBeGreaterThanOrEqual(admitted * 0.95);

    // visible: the gauges, the refusals by reason, /stats
    const metrics = parsePrometheus(
      await (await fetch(`http://127.0.0.1:${p.app.adminPort}/metrics`)).text(),
    );
    expect(Number(metrics.get('callisto_adaptive_limit')!.metrics[0]!.value)).toBe(limiterOf(p.app).limit);
    expect(Number(metrics.get('callisto_adaptive_inflight')!.metrics[0]!.value)).toBe(0);
    const shed = metrics
      .get('callisto_shed_total')!
      .metrics.find((m) => m.labels?.['reason'] === 'limit' && m.labels?.['method'] === 'burn');
    expect(Number(shed!.value)).toBe(outcomes.limit);
    const stats = (await (await fetch(`http://127.0.0.1:${p.app.adminPort}/stats`)).json()) as {
      adaptiveLimit: { limit: number; inflight: number; refused: number };
    };
    expect(stats.adaptiveLimit).toMatchObject({ limit: limiterOf(p.app).limit, inflight: 0 });
    expect(stats.adaptiveLimit.refused).toBe(outcomes.limit);
  });

  it('with server.adaptiveLimit: false every call is admitted and run', async () => {
    const p = await burner({ adaptiveLimit: false });
    const ref = await consumerOf(p.app);
    expect(appInternals(p.app).provider.limiter).toBeUndefined();
    const outcomes = await overload((i) => ref.burn(i, BURN_MS), 2_000);
    expect(outcomes.limit).toBe(0);
    expect(p.executed()).toBe(outcomes.ok + outcomes.other.length);
  });
});

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
    for (let w = 0; w < 3; w++) await Promise.all(Array.from({ length: 50 }, () => ref.run(false, 0)));
    for (let w = 0; w < 3; w++) {
      await Promise.allSettled(Array.from({ length: 100 }, () => ref.run(true, 150)));
    }
    expect(limiterOf(app).limit).toBe(10_000);
    // the same waves answered: the limit learns from them
    for (let w = 0; w < 3; w++) {
      await Promise.allSettled(Array.from({ length: 100 }, () => ref.run(false, 150)));
    }
    expect(limiterOf(app).limit).toBeLessThan(200);
  });
});

describe('priorities at the adaptive limit', () => {
  it('refuses sheddable calls first; critical ones (a call option over the method) mostly succeed', async () => {
    const p = await burner({ adaptiveLimit: true }, SheddableDef);
    const ref = await consumerOf(p.app, SheddableDef);
    const critical = withOptions(ref, { priority: 'critical' });
    const counts = { critical: { ok: 0, limit: 0 }, sheddable: { ok: 0, limit: 0 } };
    const other: string[] = [];
    // one call in 20 critical (a call option), the rest sheddable (the method's declared priority)
    await runOpenLoop({
      call: (i) => {
        const count = i % 20 === 0 ? counts.critical : counts.sheddable;
        return (i % 20 === 0 ? critical : ref).burn(i, BURN_MS).then(
          () => {
            count.ok++;
          },
          (error: unknown) => {
            if (RpcError.is(error) && error.details['shed'] === 'limit') count.limit++;
            else other.push(String(error));
          },
        );
      },
      ratePerSec: (2 * 1000) / BURN_MS,
      durationMs: 3_000,
      deadlineMs: 5_000,
      isRefusal: () => false,
    });
    const criticalCalls = counts.critical.ok + counts.critical.limit;
    const sheddableCalls = counts.sheddable.ok + counts.sheddable.limit;
    const refusedRate = {
      critical: counts.critical.limit / criticalCalls,
      sheddable: counts.sheddable.limit / sheddableCalls,
    };
    expect(refusedRate.sheddable).toBeGreaterThan(0.4);
    expect(refusedRate.sheddable).toBeGreaterThan(refusedRate.critical + 0.3);
    expect(counts.critical.ok / criticalCalls).toBeGreaterThanOrEqual(0.7);
    expect(other.length).toBeLessThan((criticalCalls + sheddableCalls) * 0.05);
  });

  it('refuses an unknown priority in defineService and in withOptions, naming the key', async () => {
    const consumer = await testApp({ application: 'load' });
    const ref = consumer.refer(BurnerDef, { url: '127.0.0.1:1' });
    expect(() => withOptions(ref, { priority: 'urgent' as never }).burn(1, 0)).toThrow(
      /withOptions\(\)\.priority.*critical, default, sheddable/,
    );
    expect(() =>
      defineService<Burner>('test.Wrong', { methods: { burn: { priority: 'urgent' as never } } }),
    ).toThrow(/defineService\(test\.Wrong\)\.methods\.burn\.priority.*critical, default, sheddable/);
  });
});

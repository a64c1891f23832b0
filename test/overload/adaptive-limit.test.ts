/**
 * The provider's adaptive concurrency limit (issue 28), over real sockets: a provider whose method
 * burns ~5 ms of CPU (after yielding once, as a handler that awaits I/O does, so that calls are in
 * flight together), offered at least twice its capacity at a constant rate (open loop) for 3 s, counts
 * as overloaded, learns a limit well below 100 and refuses the excess `Overloaded`
 * (`details.shed: 'limit'`) before decoding — a probe right after `decode` and the handler count what
 * was decoded and run — while the calls it admits, with 5 s deadlines, succeed. Switched off, every call
 * is admitted. Priorities: under the same overload sheddable calls are refused far more often than
 * critical ones, which mostly succeed. The limit, the calls in flight, admitted and refused, the
 * overloaded state and the event loop's delay are on /metrics and /stats. Nothing is asserted about
 * latency (test/overload/open-loop-overload.test.ts is about that).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runOpenLoop } from '../../bench/lib/open-loop.js';
import { choosePinning, type RunningServer, startServer } from '../../bench/lib/processes.js';
import { BURN_MS, type OverloadBench, OverloadBenchDef } from '../../bench/overload/overload-service.js';
import { closedLoopRate } from '../../bench/overload/run-overload.js';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineService, type Remote, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus } from '../support/prometheus-text.js';

const SERVER = new URL('../../bench/overload/burner-server.ts', import.meta.url).pathname;
let server: RunningServer | undefined;

afterEach(async () => {
  await closeAll();
  await server?.stop();
  server = undefined;
});

/** A provider process serving bench.Overload (4 ms of CPU per call after one turn of the loop). */
async function burner(adaptiveLimit = true) {
  process.env['BENCH_ADAPTIVE_LIMIT'] = adaptiveLimit ? '1' : '0';
  server = await startServer(SERVER, choosePinning(true), 30_000);
  const consumer = await testApp({ application: 'load' });
  const url = `127.0.0.1:${server.port}`;
  // no local throttling, no retries: every call reaches the provider once
  const ref = consumer.refer(OverloadBenchDef, {
    url,
    retries: 0,
    timeoutMs: 5_000,
    adaptiveThrottling: false,
  });
  const report = () => withOptions(ref, { timeoutMs: 30_000 }).limiter();
  return { ref, report };
}

interface Outcomes {
  ok: number;
  limit: number;
  other: string[];
}

/**
 * Twice the provider's capacity, measured with a closed loop, for `durationMs`, open loop: calls start
 * at that rate whatever happened to the ones before.
 */
async function overload(
  ref: Remote<OverloadBench>,
  call: (i: number) => Promise<unknown>,
  durationMs = 3_000,
  onOpen: () => Promise<void> = async () => {},
): Promise<Outcomes> {
  const outcomes: Outcomes = { ok: 0, limit: 0, other: [] };
  const capacity = await closedLoopRate(() => ref.burn(0), 1_000);
  await onOpen();
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
    ratePerSec: Math.max(2 * capacity, 1_000 / BURN_MS),
    durationMs,
    deadlineMs: 5_000,
    isRefusal: () => false,
  });
  return outcomes;
}

describe('the adaptive concurrency limit', () => {
  it('under twice its capacity learns a limit below 100 and refuses the excess Overloaded before decoding; admitted calls succeed', async () => {
    const { ref, report } = await burner();
    expect((await report()).limit).toBe(10_000);
    let before = await report();
    const outcomes = await overload(
      ref,
      (i) => ref.burn(i),
      3_000,
      async () => {
        before = await report();
      },
    );
    const offered = outcomes.ok + outcomes.limit + outcomes.other.length;
    const after = await report();

    expect(after.limit).toBeLessThan(100);
    expect(after.limit).toBeGreaterThanOrEqual(20);
    expect(outcomes.limit).toBeGreaterThan(offered * 0.2);
    expect(after.refused).toBe(outcomes.limit);
    // refused calls were neither decoded nor run
    const admitted = offered - outcomes.limit;
    const ran = after.executed - before.executed;
    expect(ran).toBeLessThanOrEqual(admitted);
    expect(ran).toBeGreaterThanOrEqual(outcomes.ok);
    expect(after.decoded - before.decoded).toBe(ran);
    // the admitted calls (5 s deadlines) succeed
    expect(outcomes.ok).toBeGreaterThanOrEqual(admitted * 0.95);

    // visible: the gauges, the refusals by reason, /stats
    const admin = `http://127.0.0.1:${after.adminPort}`;
    const metrics = parsePrometheus(await (await fetch(`${admin}/metrics`)).text());
    const gauge = (name: string) => Number(metrics.get(name)!.metrics[0]!.value);
    expect(gauge('callisto_adaptive_limit')).toBe(after.limit);
    expect(gauge('callisto_adaptive_inflight')).toBeLessThanOrEqual(1);
    expect(gauge('callisto_adaptive_admitted_total')).toBeGreaterThanOrEqual(after.admitted);
    expect([0, 1]).toContain(gauge('callisto_adaptive_overloaded'));
    expect(gauge('callisto_event_loop_delay_seconds')).toBeGreaterThanOrEqual(0);
    const shed = metrics
      .get('callisto_shed_total')!
      .metrics.find((m) => m.labels?.['reason'] === 'limit' && m.labels?.['method'] === 'burn');
    expect(Number(shed!.value)).toBe(outcomes.limit);
    const stats = (await (await fetch(`${admin}/stats`)).json()) as {
      adaptiveLimit: { limit: number; refused: number; overloaded: boolean; admitted: number };
    };
    expect(stats.adaptiveLimit).toMatchObject({ limit: after.limit, refused: outcomes.limit });
    expect(stats.adaptiveLimit.admitted).toBeGreaterThanOrEqual(after.admitted);
    expect(typeof stats.adaptiveLimit.overloaded).toBe('boolean');
  }, 30_000);

  it('with server.adaptiveLimit: false no call is refused at a limit', async () => {
    const { ref, report } = await burner(false);
    const outcomes = await overload(ref, (i) => ref.burn(i), 2_000);
    expect((await report()).on).toBe(false);
    expect(outcomes.limit).toBe(0);
  }, 30_000);
});

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

interface Burner {
  burn(n: number, ms: number): Promise<number>;
}
const BurnerDef = defineService<Burner>('test.Burner', { methods: { burn: {} } });

describe('priorities at the adaptive limit', () => {
  it('refuses sheddable calls first; critical ones (a call option over the method) mostly succeed', async () => {
    const { ref } = await burner();
    const critical = withOptions(ref, { priority: 'critical' });
    const counts = { critical: { ok: 0, limit: 0 }, sheddable: { ok: 0, limit: 0 } };
    const other: string[] = [];
    // one call in 20 critical (a call option), the rest sheddable (the method's declared priority)
    await overload(ref, (i) => {
      const count = i % 20 === 0 ? counts.critical : counts.sheddable;
      return (i % 20 === 0 ? critical : ref).burnSheddable(i).then(
        () => {
          count.ok++;
        },
        (error: unknown) => {
          if (RpcError.is(error) && error.details['shed'] === 'limit') count.limit++;
          else other.push(String(error));
        },
      );
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
  }, 30_000);

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

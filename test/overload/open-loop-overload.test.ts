/**
 * Overload without collapse (issue 28), over real sockets. A provider in its own process
 * (bench/overload/burner-server.ts) whose method waits a turn of the event loop and then burns 4 ms of
 * CPU (a handler that awaits I/O and then computes) has its capacity measured with a closed loop; then it
 * is offered twice that at a constant rate for 5 s (open loop: calls start whatever happened to the ones
 * before), each call with a 1 s deadline:
 *
 * - with the adaptive limit (the default) the goodput (calls answered within their deadline) stays at
 *   least half the capacity, the admitted calls' p95 stays below the deadline (150–800 ms when the
 *   machine is not itself overloaded), at most a quarter of the calls miss their deadline (those
 *   admitted before the gate opened: 0–4 % on a machine that is not itself overloaded, ~10 % inside a
 *   parallel suite at a load average of 20 on 2 cores), and the excess is refused `Overloaded` at once;
 * - with `server.adaptiveLimit: false` the queue grows until the calls miss their deadlines (the
 *   collapse: more than 30 % of them fail — 40–90 % in practice; deadline-aware admission saves the
 *   rest —, p95 at the deadline).
 *
 * And, on the same provider under the same overload (5 s deadlines): the limit falls from 10 000 to
 * below 100 and the excess is refused `Overloaded` (`details.shed: 'limit'`) before decoding — probes at
 * the head of the chain and right after `decode` count what arrived, was decoded and ran —; the gauges,
 * the shed count and /stats agree; sheddable calls are refused far more often than critical ones.
 * Every test here runs one provider process at a time (one file: its tests run in turn), so that two
 * overloads do not share the machine's two cores. In one process (adaptive-limit.test.ts): what is not
 * overload — a burst, a closed loop — is admitted whole.
 *
 * The figures are printed; bounds are wide (two shared cores).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runOpenLoop } from '../../bench/lib/open-loop.js';
import { choosePinning, type RunningServer, startServer } from '../../bench/lib/processes.js';
import { BURN_MS, type OverloadBench, OverloadBenchDef } from '../../bench/overload/overload-service.js';
import {
  closedLoopRate,
  describeRun,
  type OverloadRun,
  runOverload,
} from '../../bench/overload/run-overload.js';
import { type Remote, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus } from '../support/prometheus-text.js';

const SERVER = new URL('../../bench/overload/burner-server.ts', import.meta.url).pathname;
let server: RunningServer | undefined;

afterEach(async () => {
  await closeAll();
  await server?.stop();
  server = undefined;
});

async function overloadRun(adaptiveLimit: boolean) {
  process.env['BENCH_ADAPTIVE_LIMIT'] = adaptiveLimit ? '1' : '0';
  server = await startServer(SERVER, choosePinning(true), 30_000);
  const consumer = await testApp({ application: 'load' });
  const url = `127.0.0.1:${server.port}`;
  const load = consumer.refer(OverloadBenchDef, { url, retries: 0, timeoutMs: 1_000 });
  const report = consumer.refer(OverloadBenchDef, { url, adaptiveThrottling: false });
  const run = await runOverload({ load, report }, { factor: 2, durationMs: 5_000, deadlineMs: 1_000 });
  console.log(describeRun(adaptiveLimit ? 'adaptive limit on' : 'adaptive limit off', run));
  return run;
}

/**
 * The provider must have been offered what the test says: when the machine is so loaded that the
 * consumer's process cannot deliver 1.3× the provider's capacity to it, what follows says nothing about
 * overload, and the test is skipped (printed), not passed or failed on noise.
 */
function inconclusiveUnlessOverloaded(run: OverloadRun, ctx: { skip: (note?: string) => void }): void {
  if (run.deliveredFactor >= 1.3) return;
  const note = `inconclusive: only ${run.deliveredFactor.toFixed(2)}x the capacity reached the provider`;
  console.log(`[overload] ${note}`);
  ctx.skip(note);
}

/** The bounds the adaptive limit must keep at twice the capacity. */
function meetsBounds(r: OverloadRun): boolean {
  return (
    r.deliveredFactor >= 1.3 &&
    r.failed <= 0.25 * r.offered &&
    r.admittedP95Ms < 1_000 &&
    r.goodputPerSec >= 0.5 * r.capacity &&
    r.refusedShare > 0.2 &&
    r.limiter.refused > 0
  );
}

describe('overload without collapse: twice the capacity, open loop', () => {
  it('with the adaptive limit (the default): goodput near capacity, admitted p95 bounded', async (ctx) => {
    // Up to three rounds, each on a fresh provider process: inside the parallel suite another file's
    // load can starve the provider for a whole round (the gate then sees a loop that is not its own
    // overload). One round must meet every bound; without the limit no round does (the test below).
    const rounds: OverloadRun[] = [];
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        await closeAll();
        await server?.stop();
        server = undefined;
      }
      const r = await overloadRun(true);
      rounds.push(r);
      if (meetsBounds(r)) return;
    }
    const last = rounds[rounds.length - 1]!;
    inconclusiveUnlessOverloaded(last, ctx);
    // the admitted calls made their deadline, with room: the queue stayed short (the p99 holds the few
    // admitted while the limit was finding its level, bounded by the deadline anyway)
    expect(last.failed).toBeLessThanOrEqual(0.25 * last.offered);
    expect(last.admittedP95Ms).toBeLessThan(1_000);
    expect(last.goodputPerSec).toBeGreaterThanOrEqual(0.5 * last.capacity);
    // the excess was refused at once (Overloaded, never run)
    expect(last.refusedShare).toBeGreaterThan(0.2);
    expect(last.limiter.refused).toBeGreaterThan(0);
  }, 120_000);

  it('without it (server.adaptiveLimit: false) the queue grows and the calls miss their deadlines', async (ctx) => {
    const r = await overloadRun(false);
    inconclusiveUnlessOverloaded(r, ctx);
    expect(r.limiter.on).toBe(false);
    expect(r.failed).toBeGreaterThan(0.3 * r.offered);
    expect(r.admittedP95Ms).toBeGreaterThanOrEqual(950);
  }, 40_000);
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
    // up to three rounds on fresh provider processes, as the open-loop test above: a round whose
    // capacity was measured while another file starved the machine is offered too little to overload
    // it. The counts must agree in every round; one round must keep the bounds of an overload.
    let last: Array<[string, boolean]> = [];
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        await closeAll();
        await server?.stop();
        server = undefined;
      }
      last = await limitRound();
      if (last.every((holds) => holds[1])) return;
    }
    expect(last.filter((holds) => !holds[1]).map((holds) => holds[0])).toEqual([]);
  }, 90_000);

  it('with server.adaptiveLimit: false no call is refused at a limit', async () => {
    const { ref, report } = await burner(false);
    const outcomes = await overload(ref, (i) => ref.burn(i), 2_000);
    expect((await report()).on).toBe(false);
    expect(outcomes.limit).toBe(0);
  }, 30_000);
});

/**
 * One round of the limit test: asserts what must agree whatever the load (refused calls counted the
 * same by the caller, the limiter, the metrics and /stats; none decoded or run), and returns the
 * bounds that need a real overload, each named with whether it held.
 */
async function limitRound(): Promise<Array<[string, boolean]>> {
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
  expect(after.refused).toBe(outcomes.limit);
  // refused calls were neither decoded nor run
  const admitted = offered - outcomes.limit;
  const ran = after.executed - before.executed;
  expect(ran).toBeLessThanOrEqual(admitted);
  expect(ran).toBeGreaterThanOrEqual(outcomes.ok);
  expect(after.decoded - before.decoded).toBe(ran);

  // visible: the gauges, the refusals by reason, /stats
  const admin = `http://127.0.0.1:${after.adminPort}`;
  const metrics = parsePrometheus(await (await fetch(`${admin}/metrics`)).text());
  const gauge = (name: string) => Number(metrics.get(name)!.metrics[0]!.value);
  const stats = (await (await fetch(`${admin}/stats`)).json()) as {
    adaptiveLimit: { limit: number; refused: number; overloaded: boolean; admitted: number };
  };
  // the report() call itself ends after it read the limit, and its latency may close a window and
  // move the limit: the gauge is compared with /stats, read after it with no call in between
  expect(gauge('callisto_adaptive_limit')).toBe(stats.adaptiveLimit.limit);
  const limit = stats.adaptiveLimit.limit;
  expect(gauge('callisto_adaptive_inflight')).toBeLessThanOrEqual(1);
  expect(gauge('callisto_adaptive_admitted_total')).toBeGreaterThanOrEqual(after.admitted);
  expect([0, 1]).toContain(gauge('callisto_adaptive_overloaded'));
  expect(gauge('callisto_event_loop_delay_seconds')).toBeGreaterThanOrEqual(0);
  const shed = metrics
    .get('callisto_shed_total')
    ?.metrics.find((m) => m.labels?.['reason'] === 'limit' && m.labels?.['method'] === 'burn');
  expect(Number(shed?.value ?? 0)).toBe(outcomes.limit);
  expect(stats.adaptiveLimit.refused).toBe(outcomes.limit);
  expect(stats.adaptiveLimit.admitted).toBeGreaterThanOrEqual(after.admitted);
  expect(typeof stats.adaptiveLimit.overloaded).toBe('boolean');

  const figures = `limit ${limit}, refused ${outcomes.limit} of ${offered}, ok ${outcomes.ok}`;
  console.log(`[overload] adaptive limit round: ${figures}`);
  return [
    [`limit below 100 (${figures})`, limit < 100],
    [`limit at least 20 (${figures})`, limit >= 20],
    [`more than 20 % refused (${figures})`, outcomes.limit > offered * 0.2],
    // the admitted calls (5 s deadlines) succeed
    [`admitted calls answered ≥ 95 % (${figures})`, outcomes.ok >= admitted * 0.95],
  ];
}

describe('priorities at the adaptive limit', () => {
  it('refuses sheddable calls first; critical ones (a call option over the method) mostly succeed', async () => {
    // up to three rounds on fresh provider processes, as the open-loop test above (a starved round
    // says nothing); one must keep every bound
    let last: ReturnType<typeof priorityBounds> | undefined;
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        await closeAll();
        await server?.stop();
        server = undefined;
      }
      last = priorityBounds(await priorityRound());
      if (last.every((holds) => holds[1])) return;
    }
    expect(last!.filter((holds) => !holds[1]).map((holds) => holds[0])).toEqual([]);
  }, 90_000);
});

/** One round of the priority test: refused and answered calls by priority. */
async function priorityRound() {
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
  return { counts, other };
}

/** The priority test's bounds, each named with whether it held. */
function priorityBounds({ counts, other }: Awaited<ReturnType<typeof priorityRound>>) {
  const criticalCalls = counts.critical.ok + counts.critical.limit;
  const sheddableCalls = counts.sheddable.ok + counts.sheddable.limit;
  const critical = counts.critical.limit / criticalCalls;
  const sheddable = counts.sheddable.limit / sheddableCalls;
  const figures = `sheddable refused ${sheddable.toFixed(2)}, critical refused ${critical.toFixed(2)}`;
  return [
    [`sheddable refused > 0.4 (${figures})`, sheddable > 0.4],
    [`sheddable refused > critical + 0.3 (${figures})`, sheddable > critical + 0.3],
    [`critical answered ≥ 0.7 (${figures})`, counts.critical.ok / criticalCalls >= 0.7],
    [`other errors < 5 % (${other.length})`, other.length < (criticalCalls + sheddableCalls) * 0.05],
  ] as Array<[string, boolean]>;
}

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
 * And in one process: a burst of 250 calls at once on the idle provider (1 s of work, 15 s deadlines)
 * and a closed loop of 500 callers of a fast method are admitted whole: nothing refused.
 *
 * The figures are printed; bounds are wide (two shared cores).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { choosePinning, type RunningServer, startServer } from '../../bench/lib/processes.js';
import { OverloadBenchDef } from '../../bench/overload/overload-service.js';
import { describeRun, type OverloadRun, runOverload } from '../../bench/overload/run-overload.js';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

const SERVER = new URL('../../bench/overload/burner-server.ts', import.meta.url).pathname;
let server: RunningServer | undefined;

afterEach(async () => {
  await closeAll();
  await server?.stop();
  server = undefined;
});

async function overload(adaptiveLimit: boolean) {
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

describe('overload without collapse: twice the capacity, open loop', () => {
  it('with the adaptive limit (the default): goodput near capacity, admitted p95 bounded', async (ctx) => {
    const r = await overload(true);
    inconclusiveUnlessOverloaded(r, ctx);
    // the admitted calls made their deadline, with room: the queue stayed short (the p99 holds the few
    // admitted while the limit was finding its level, bounded by the deadline anyway)
    expect(r.failed).toBeLessThanOrEqual(0.25 * r.offered);
    expect(r.admittedP95Ms).toBeLessThan(1_000);
    expect(r.goodputPerSec).toBeGreaterThanOrEqual(0.5 * r.capacity);
    // the excess was refused at once (Overloaded, never run)
    expect(r.refusedShare).toBeGreaterThan(0.2);
    expect(r.limiter.refused).toBeGreaterThan(0);
  }, 40_000);

  it('without it (server.adaptiveLimit: false) the queue grows and the calls miss their deadlines', async (ctx) => {
    const r = await overload(false);
    inconclusiveUnlessOverloaded(r, ctx);
    expect(r.limiter.on).toBe(false);
    expect(r.failed).toBeGreaterThan(0.3 * r.offered);
    expect(r.admittedP95Ms).toBeGreaterThanOrEqual(950);
  }, 40_000);
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

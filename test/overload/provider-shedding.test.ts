/**
 * The provider's overload protection (issue 28), over real sockets: deadline-aware admission refuses,
 * before decoding and before running, a call whose budget is smaller than the method's learnt service
 * time (`Timeout` with `details.shed`, which a consumer fails over), and a call whose deadline expired while it waited in
 * the provider — behind a filter that queues, or for a worker thread — is dropped without running.
 * Executions and decodes are counted by the provider itself; the shed calls by reason on `/stats`.
 * Timings are wide: a service time of ~150 ms against budgets of 40 ms and 5 s.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, defineFilter, defineService, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { heavy } from '../workers/fixtures/heavy-impl.js';
import { HEAVY_MODULE, HeavyDef } from '../workers/fixtures/heavy-service.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Paced {
  /** Waits `ms` (no CPU), then answers `key`. */
  work(key: string, ms: number): Promise<string>;
}

const PacedDef = defineService<Paced>('test.Paced', { methods: { work: {} } });

/** A provider of test.Paced that counts what it decoded and what it executed. */
async function pacedProvider(server: Record<string, unknown> = {}, filters: unknown[] = []) {
  const executed: string[] = [];
  let decoded = 0;
  // a hook right after `decode`: a call that reaches it had its arguments decoded
  const decodeProbe = defineFilter({
    name: 'test-decode-probe',
    position: 'provider',
    order: 355,
    start(invocation) {
      if (invocation.args.length > 0) decoded++;
    },
  });
  const app = await testApp({
    application: 'paced',
    admin: { enabled: true },
    server,
    filters: { provider: [decodeProbe, ...(filters as never[])] },
  });
  app.provide(PacedDef, {
    async work(key, ms) {
      executed.push(key);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return key;
    },
  });
  await app.start();
  return { app, executed, decoded: () => decoded };
}

async function failure(call: Promise<unknown>): Promise<RpcError> {
  try {
    await call;
  } catch (error) {
    expect(RpcError.is(error)).toBe(true);
    return error as RpcError;
  }
  throw new Error('the call succeeded');
}

/** The provider's shed counts of `method` on /stats. */
async function shedOn(app: CallistoApp, method: string): Promise<Record<string, number>> {
  const response = await fetch(`http://127.0.0.1:${app.adminPort}/stats`);
  const feed = (await response.json()) as {
    methods: Array<{ side: string; method: string; shed?: Record<string, number> }>;
  };
  return feed.methods.find((m) => m.side === 'provider' && m.method === method)?.shed ?? {};
}

describe('deadline-aware admission', () => {
  it("refuses (Timeout, shed: deadline), undecoded and unrun, a call whose budget is below the method's learnt service time", async () => {
    const p = await pacedProvider();
    const consumer = await testApp();
    const ref = consumer.refer(PacedDef, { url: p.app.address!, retries: 0, timeoutMs: 5_000 });
    // until the method has enough samples, every call is admitted: a short budget times out there
    const early = await failure(withOptions(ref, { timeoutMs: 40 }).work('early', 150));
    expect(early.code).toBe('Timeout');
    await waitFor(() => p.executed.includes('early'));
    // teach it: 20 calls of ~150 ms
    await Promise.all(Array.from({ length: 20 }, (_, i) => ref.work(`learn${i}`, 150)));
    const executedBefore = p.executed.length;
    const decodedBefore = p.decoded();

    const refused = await failure(withOptions(ref, { timeoutMs: 40 }).work('short', 150));
    expect(refused).toMatchObject({ code: 'Timeout', remote: true });
    expect(refused.details['shed']).toBe('deadline');
    expect(refused.message).toMatch(/deadline-aware admission/);
    expect(p.executed.length).toBe(executedBefore);
    expect(p.decoded()).toBe(decodedBefore);

    // a call with time enough runs
    expect(await withOptions(ref, { timeoutMs: 5_000 }).work('long', 150)).toBe('long');
    expect(p.executed).toContain('long');
    expect(p.executed).not.toContain('short');
    expect(await shedOn(p.app, 'work')).toEqual({ deadline: 1 });
  });

  it('a refused call is failed over to another provider, which runs it', async () => {
    const slow = await pacedProvider();
    const other = await pacedProvider({ deadlineAdmission: false });
    const consumer = await testApp();
    const toSlow = consumer.refer(PacedDef, { url: slow.app.address!, timeoutMs: 5_000 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => toSlow.work(`learn${i}`, 150)));
    // both providers: a call with 100 ms left cannot be admitted on `slow` (150 ms learnt); refused
    // there, it fails over to `other`, which runs it
    const both = consumer.refer(PacedDef, {
      url: [slow.app.address!, other.app.address!],
      loadbalance: 'roundrobin',
      timeoutMs: 5_000,
    });
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => withOptions(both, { timeoutMs: 100 }).work(`tight${i}`, 10)),
    );
    expect(answers).toEqual(['tight0', 'tight1', 'tight2', 'tight3']);
    for (let i = 0; i < 4; i++) {
      expect(slow.executed).not.toContain(`tight${i}`);
      expect(other.executed).toContain(`tight${i}`);
    }
    expect((await shedOn(slow.app, 'work')).deadline).toBeGreaterThanOrEqual(1);
  });

  it('is switched off by server.deadlineAdmission: false (the short call runs, for nobody)', async () => {
    const p = await pacedProvider({ deadlineAdmission: false });
    const consumer = await testApp();
    const ref = consumer.refer(PacedDef, { url: p.app.address!, retries: 0, timeoutMs: 5_000 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => ref.work(`learn${i}`, 150)));
    const timedOut = await failure(withOptions(ref, { timeoutMs: 40 }).work('short', 150));
    expect(timedOut.code).toBe('Timeout');
    await waitFor(() => p.executed.includes('short'), 5_000, { message: 'the short call runs' });
  });
});

describe('calls expired while they waited', () => {
  it('are dropped before the handler when their deadline passed behind a filter that queues', async () => {
    // a user filter that lets one call of `work` through at a time (a queue in the provider)
    let tail: Promise<unknown> = Promise.resolve();
    let passed = 0;
    const oneAtATime = defineFilter({
      name: 'test-one-at-a-time',
      position: 'provider',
      filter: (next) => (invocation) => {
        const turn = tail.then(() => {
          passed++;
          return next(invocation);
        });
        tail = turn.catch(() => undefined);
        return turn;
      },
    });
    const p = await pacedProvider({}, [oneAtATime]);
    const consumer = await testApp();
    const ref = consumer.refer(PacedDef, { url: p.app.address!, retries: 0, timeoutMs: 5_000 });
    const first = ref.work('first', 400);
    await waitFor(() => p.executed.includes('first'));
    const queued = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        failure(withOptions(ref, { timeoutMs: 150 }).work(`queued${i}`, 1)),
      ),
    );
    for (const error of queued) expect(error.code).toBe('Timeout');
    expect(await first).toBe('first');
    await waitFor(() => passed === 5, 5_000, { message: 'every queued call had its turn' });
    expect(p.executed).toEqual(['first']);
    expect(await ref.work('after', 1)).toBe('after');
    await waitFor(async () => (await shedOn(p.app, 'work')).expired === 4, 5_000, {
      message: 'the four dropped calls counted as shed: expired',
    });
  });

  it('are dropped at their turn in a leaky bucket: never run, counted', async () => {
    const executed: string[] = [];
    const app = await testApp({ application: 'leaky', admin: { enabled: true } });
    // one call every 500 ms, up to 8 waiting
    app.provide(
      PacedDef,
      {
        async work(key) {
          executed.push(key);
          return key;
        },
      },
      { limits: { rate: { kind: 'leaky', perSecond: 2, queue: 8 } } } as never,
    );
    await app.start();
    const consumer = await testApp();
    const ref = consumer.refer(PacedDef, { url: app.address!, retries: 0, timeoutMs: 5_000 });
    expect(await ref.work('first', 0)).toBe('first'); // takes the bucket's turn: the next is ~500 ms away
    const queued = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        failure(withOptions(ref, { timeoutMs: 150 }).work(`queued${i}`, 0)),
      ),
    );
    for (const error of queued) expect(error.code).toBe('Timeout');
    await waitFor(async () => (await shedOn(app, 'work')).expired === 3, 5_000, {
      message: 'the three calls counted as shed: expired, at their turns',
    });
    expect(executed).toEqual(['first']);
  });

  it('are dropped from a worker pool queue: never run, answered Timeout, counted', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callisto-shed-'));
    dirs.push(dir);
    const at = (name: string) => path.join(dir, name);
    const app = await testApp({ application: 'heavy', admin: { enabled: true } });
    app.provide(HeavyDef, heavy, {
      executor: { kind: 'worker', module: HEAVY_MODULE, export: 'heavy', threads: 1, queue: 8 },
    });
    await app.start();
    const pool = appInternals(app).provider.executors[0]!;
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0, timeoutMs: 20_000 });
    const first = ref.hold(at('first'));
    await waitFor(() => pool.busy === 1);
    const queued = Array.from({ length: 3 }, (_, i) =>
      failure(withOptions(ref, { timeoutMs: 300 }).hold(at(`queued${i}`))),
    );
    for (const error of await Promise.all(queued)) expect(error.code).toBe('Timeout');
    // every file there: whatever still runs finishes at once and says so in `<file>.done`
    for (const name of ['first', 'queued0', 'queued1', 'queued2']) writeFileSync(at(name), '');
    expect(await first).toMatch(/^thread \d+$/);
    await waitFor(() => pool.busy === 0 && pool.queued === 0, 10_000);
    expect(await withOptions(ref, { timeoutMs: 20_000 }).where()).toMatch(/^thread \d+$/);
    expect(existsSync(at('first.done'))).toBe(true);
    for (let i = 0; i < 3; i++) expect(existsSync(at(`queued${i}.done`))).toBe(false);
    expect(await shedOn(app, 'hold')).toEqual({ expired: 3 });
  });
});

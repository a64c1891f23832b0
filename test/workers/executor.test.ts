/**
 * Worker-thread executors (issue 16), over real sockets: a method with `executor: { kind: 'worker' }`
 * runs in a thread of its pool, with the caller's attachments and response attachments, errors shaped
 * exactly as on the loop, a bounded queue (beyond it `Overloaded`, which a consumer fails over), the
 * caller's deadline and cancellation reaching the thread (or taking a waiting call out of the queue), a
 * thread that dies failing only its own call and being replaced, and a graceful close that lets the
 * threads finish. Behaviour only: no timings.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, type Remote, type RpcError, withOptions } from '../../src/index.js';
import { defaultWorkerHeapMb, resolveExecutor } from '../../src/provider/executor-options.js';
import type { ProvideOptions } from '../../src/provider/provide-options.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { heavy } from './fixtures/heavy-impl.js';
import { HEAVY_MODULE, type Heavy, HeavyDef } from './fixtures/heavy-service.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): (name: string) => string {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-workers-'));
  dirs.push(dir);
  return (name) => path.join(dir, name);
}

async function provider(executor: ProvideOptions<Heavy>): Promise<CallistoApp> {
  const app = await testApp({ application: 'heavy' });
  app.provide(HeavyDef, heavy, executor);
  await app.start();
  return app;
}

const worker = (extra: Record<string, unknown> = {}) => ({
  executor: { kind: 'worker' as const, module: HEAVY_MODULE, export: 'heavy', threads: 2, ...extra },
});

const poolOf = (app: CallistoApp) => appInternals(app).provider.executors[0]!;

async function failure(call: Promise<unknown>): Promise<RpcError> {
  try {
    await call;
  } catch (error) {
    return error as RpcError;
  }
  throw new Error('the call succeeded');
}

describe('worker executor', () => {
  it('runs the method in a worker thread, with attachments both ways; a method may stay on the loop', async () => {
    const app = await provider({ ...worker(), methods: { where: { executor: 'loop' } } });
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address! });
    expect(await ref.spin(1)).toMatch(/^thread \d+$/);
    expect(await ref.where()).toBe('main');
    let seen: Record<string, string> | undefined;
    const tapped = consumer.refer(HeavyDef, {
      url: app.address!,
      filters: [
        (next) => async (invocation) => {
          invocation.attachments = { ...invocation.attachments, in: 'hello' };
          const value = await next(invocation);
          seen = invocation.responseAttachments;
          return value;
        },
      ],
    });
    expect(await tapped.attach()).toMatch(/^thread \d+ saw hello$/);
    expect(seen).toMatchObject({ out: 'hello!' });
  });

  it('gives the caller the same errors as on the loop: declared ones with their fields, RpcErrors, system errors scrubbed', async () => {
    const onLoop = await provider({});
    const onWorker = await provider(worker());
    const consumer = await testApp();
    const shape = (error: RpcError) => ({
      code: error.code,
      name: error.name,
      remoteName: error.remoteName,
      message: error.message.replace(/ref \S+\)/, 'ref X)'),
      details: error.details,
    });
    const calls: Array<(ref: Remote<Heavy>) => Promise<unknown>> = [
      (ref) => ref.failDeclared(12),
      (ref) => ref.failRpc(),
      (ref) => ref.failSystem(),
      (ref) => ref.failWrapped(),
      (ref) => ref.failPlain(),
    ];
    const loopRef = consumer.refer(HeavyDef, { url: onLoop.address!, retries: 0 });
    const workerRef = consumer.refer(HeavyDef, { url: onWorker.address!, retries: 0 });
    for (const call of calls) {
      const fromLoop = shape(await failure(call(loopRef)));
      const fromWorker = shape(await failure(call(workerRef)));
      expect(fromWorker).toEqual(fromLoop);
    }
    const declared = await failure(workerRef.failDeclared(12));
    expect(declared).toMatchObject({
      code: 'ProviderError',
      name: 'QuotaError',
      details: { used: 12, limit: 10 },
    });
    const system = await failure(workerRef.failSystem());
    expect(system.message).not.toContain('/secret');
    expect((await failure(workerRef.failWrapped())).message).not.toContain('/secret');
    expect(await failure(workerRef.failRpc())).toMatchObject({
      code: 'BadRequest',
      details: { field: 'widget' },
    });
    expect((await failure(workerRef.failPlain())).details).toEqual({});
  });

  it("serves the app's own in-process calls in a thread too", async () => {
    const app = await testApp({ application: 'both' });
    app.provide(HeavyDef, heavy, worker());
    await app.start();
    const ref = app.refer(HeavyDef);
    expect(await ref.spin(1)).toMatch(/^thread \d+$/);
    expect((await failure(ref.failDeclared(3))).details).toEqual({ used: 3, limit: 10 });
  });

  it('refuses a call beyond the queue bound with Overloaded, never run, and a consumer fails it over', async () => {
    const at = scratch();
    const full = await provider(worker({ threads: 1, queue: 2 }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: full.address!, retries: 0, timeoutMs: 20_000 });
    const held = [ref.hold(at('go')), ref.hold(at('go')), ref.hold(at('go'))];
    const pool = poolOf(full);
    await waitFor(() => pool.busy === 1 && pool.queued === 2, 10_000, {
      message: 'one running, two waiting',
    });
    const refused = await failure(ref.where());
    expect(refused.code).toBe('Overloaded');
    expect(refused.message).toContain('executor.queue');

    // with another provider beside it, a refused call (not idempotent) is failed over, not lost
    const spare = await provider(worker({ threads: 1 }));
    const both = consumer.refer(HeavyDef, {
      url: [full.address!, spare.address!],
      retries: 1,
      loadbalance: 'roundrobin',
    });
    const answers = await Promise.all([both.where(), both.where(), both.where(), both.where()]);
    expect(answers).toHaveLength(4);
    expect(pool.queued).toBe(2);
    writeFileSync(at('go'), '');
    expect(await Promise.all(held)).toHaveLength(3);
  });

  it("aborts the handler's signal in its thread at the caller's deadline and on the caller's cancel", async () => {
    const at = scratch();
    const app = await provider(worker());
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0 });
    const timedOut = await failure(withOptions(ref, { timeoutMs: 300 }).waitCancel(at('deadline')));
    expect(timedOut.code).toBe('Timeout');
    await waitFor(() => readIfThere(at('deadline')) === 'Timeout', 10_000, {
      message: 'the thread saw its deadline',
    });

    const controller = new AbortController();
    const cancelled = failure(withOptions(ref, { signal: controller.signal }).waitCancel(at('cancel')));
    await waitFor(() => poolOf(app).busy === 1);
    controller.abort();
    expect((await cancelled).code).toBe('Cancelled');
    await waitFor(() => readIfThere(at('cancel')) === 'Cancelled', 10_000, {
      message: 'the thread saw the cancel',
    });
    await waitFor(() => poolOf(app).busy === 0);
  });

  it('takes a waiting call out of the queue when its caller gives up: it never runs', async () => {
    const at = scratch();
    const app = await provider(worker({ threads: 1, queue: 4 }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0, timeoutMs: 20_000 });
    const held = ref.hold(at('go'));
    const pool = poolOf(app);
    await waitFor(() => pool.busy === 1);
    const gaveUp = await failure(withOptions(ref, { timeoutMs: 200 }).waitCancel(at('never')));
    expect(gaveUp.code).toBe('Timeout');
    // the provider's own deadline (its clock, from when it read the request) takes it out
    await waitFor(() => pool.queued === 0, 10_000, { message: 'the waiting call leaves the queue' });
    writeFileSync(at('go'), '');
    await held;
    expect(await ref.where()).toMatch(/^thread/);
    expect(readIfThere(at('never'))).toBeUndefined();
  });

  it("with cancel: 'terminate', stops a thread whose handler ignores its signal and starts another", async () => {
    const at = scratch();
    const app = await provider(worker({ threads: 1, cancel: 'terminate' }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0 });
    const pool = poolOf(app);
    const before = await ref.where();
    const timedOut = await failure(withOptions(ref, { timeoutMs: 300 }).spinUntil(at('never'), 60_000));
    expect(timedOut.code).toBe('Timeout');
    await waitFor(() => pool.replaced === 1 && pool.threads === 1 && pool.busy === 0, 20_000, {
      message: 'the thread replaced',
    });
    const after = await withOptions(ref, { timeoutMs: 20_000 }).where();
    expect(after).toMatch(/^thread/);
    expect(after).not.toBe(before);
  });

  it('a thread that dies fails only its own call and is replaced', async () => {
    const at = scratch();
    const app = await provider(worker({ threads: 2 }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0, timeoutMs: 20_000 });
    const pool = poolOf(app);
    const held = ref.hold(at('go'));
    await waitFor(() => pool.busy === 1);
    const crashed = await failure(ref.crash());
    expect(crashed.code).toBe('Internal');
    expect(crashed.message).toContain('worker thread');
    await waitFor(() => pool.replaced === 1 && pool.threads === 2, 20_000, {
      message: 'the dead thread replaced',
    });
    writeFileSync(at('go'), '');
    expect(await held).toMatch(/^thread/);
    expect(await Promise.all([ref.spin(1), ref.spin(1), ref.spin(1)])).toHaveLength(3);
  });

  it('bounds the heap of a thread (resourceLimits): past it the thread is stopped, its call fails, it is replaced', async () => {
    const app = await provider(worker({ threads: 1, resourceLimits: { maxOldGenerationSizeMb: 48 } }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0, timeoutMs: 30_000 });
    const pool = poolOf(app);
    expect(await ref.hoard(4)).toBeGreaterThan(0); // within the limit
    // 400 MB of live objects in a thread limited to 48 MB
    const stopped = await failure(ref.hoard(400));
    expect(stopped.code).toBe('Internal');
    expect(stopped.message).toContain('worker thread');
    await waitFor(() => pool.replaced === 1 && pool.threads === 1, 20_000, {
      message: 'the thread replaced',
    });
    expect(await ref.spin(1)).toMatch(/^thread/);
  });

  it('gives every thread a heap limit by default: a quarter of the main heap, at least 128 MB', () => {
    const resolved = resolveExecutor(
      { kind: 'worker', module: HEAVY_MODULE },
      'provide(test.Heavy).executor',
    );
    expect(resolved!.resourceLimits.maxOldGenerationSizeMb).toBe(defaultWorkerHeapMb());
    expect(defaultWorkerHeapMb()).toBeGreaterThanOrEqual(128);
    expect(() =>
      resolveExecutor({ kind: 'worker', module: HEAVY_MODULE, resourceLimits: { heapMb: 1 } } as never, 'x'),
    ).toThrow(/x.resourceLimits.heapMb: unknown limit/);
  });

  it('a graceful close waits for the threads to finish what they run, a call given up included', async () => {
    const at = scratch();
    const app = await provider(worker({ threads: 1 }));
    const consumer = await testApp();
    const ref = consumer.refer(HeavyDef, { url: app.address!, retries: 0 });
    // the caller gives up; the handler ignores its signal and goes on in its thread
    const gaveUp = await failure(withOptions(ref, { timeoutMs: 200 }).hold(at('go')));
    expect(gaveUp.code).toBe('Timeout');
    expect(poolOf(app).busy).toBe(1);
    const closed = app.close();
    await waitFor(() => poolOf(app).state !== 'running', 10_000, { message: 'the pool closing' });
    writeFileSync(at('go'), '');
    await closed;
    expect(readIfThere(at('go.done'))).toMatch(/^thread/);
    expect(poolOf(app).busy).toBe(0);
  });

  it('fails the start, naming the module, when the implementation cannot be loaded', async () => {
    const app = await testApp();
    app.provide(HeavyDef, heavy, { executor: { kind: 'worker', module: HEAVY_MODULE, export: 'nope' } });
    await expect(app.start()).rejects.toThrow(/no export "nope".*set executor\.export/);
    const other = await testApp();
    expect(() =>
      other.provide(HeavyDef, heavy, { executor: { kind: 'worker', module: './relative.js' } }),
    ).toThrow(/executor\.module: must be a file URL or an absolute path/);
    expect(() =>
      other.provide(HeavyDef, heavy, { executor: { kind: 'worker', module: HEAVY_MODULE, threads: 0 } }),
    ).toThrow(/executor\.threads: must be an integer from 1/);
  });
});

function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

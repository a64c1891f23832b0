/**
 * Streams and the provider's process and thread executors. `server.workers`: each worker process
 * serves the streams of the connections it was handed (several consumers' streams land on both
 * workers, each stream whole and from one process), and a rolling restart ends a stream open on a
 * retiring worker with Shutdown after its drain, never a hang. Worker-thread executors do not serve
 * streams: `provide()` refuses one for a stream method — given per method or for the whole service —
 * with a ConfigError naming the key and the fix, and the fix (the stream methods on the loop) serves the
 * stream on the event loop while the unary method runs in a thread. Real processes and threads, TCP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { configErrorOf } from '../support/config-error-of.js';
import { killAll, startChild } from './fixtures/process.js';
import { pidStream } from './fixtures/stream-impl.js';
import { PidStreamDef } from './fixtures/stream-service.js';

const CLUSTER = new URL('./fixtures/stream-cluster-provider.ts', import.meta.url);
const IMPL = new URL('./fixtures/stream-impl.ts', import.meta.url);

afterEach(async () => {
  await closeAll();
  await killAll();
});

async function collect(stream: AsyncIterable<number>): Promise<number[]> {
  const seen: number[] = [];
  for await (const pid of stream) seen.push(pid);
  return seen;
}

describe('streams with server.workers', () => {
  it('each worker serves the streams of its connections, whole, from one process', async () => {
    const child = await startChild(CLUSTER, { WK_WORKERS: '2' });
    const primary = Number(/PRIMARY (\d+)/.exec(child.output())![1]);
    // one connection per consumer app; the primary hands them out round robin
    const consumers = await Promise.all([1, 2, 3, 4].map(() => testApp({ consumer: { snapshotDir: '' } })));
    const refs = consumers.map((app) => app.refer(PidStreamDef, { url: child.address, retries: 0 }));
    const streams = await Promise.all(refs.map((ref) => collect(ref.pids(2_000, 0))));
    const pids = new Set<number>();
    for (const stream of streams) {
      expect(stream).toHaveLength(2_000);
      expect(new Set(stream).size).toBe(1); // one stream, one process
      pids.add(stream[0]!);
    }
    expect(pids.size).toBe(2);
    expect(pids.has(primary)).toBe(false);
  }, 60_000);

  it('a rolling restart ends a stream open on a retiring worker with Shutdown, not a hang', async () => {
    const child = await startChild(CLUSTER, { WK_WORKERS: '2' });
    const consumer = await testApp({ consumer: { snapshotDir: '' } });
    const ref = consumer.refer(PidStreamDef, { url: child.address, retries: 0 });
    const iteration = ref.pids(1_000_000, 50)[Symbol.asyncIterator]();
    const first = await iteration.next();
    expect(first.done).toBe(false);
    child.process.kill('SIGHUP');
    const started = performance.now();
    let error: unknown;
    try {
      while ((await iteration.next()).done !== true) {}
    } catch (caught) {
      error = caught;
    }
    expect(RpcError.is(error), String(error)).toBe(true);
    expect(
      (error as RpcError).code,
      `${(error as Error).message} after ${Math.round(performance.now() - started)} ms\n${child.output()}`,
    ).toBe('Shutdown');
    // drained for at most shutdownTimeoutMs (1.5 s), then ended: generous bound for a loaded machine
    expect(performance.now() - started).toBeLessThan(20_000);
    // the new worker serves streams
    const again = consumer.refer(PidStreamDef, { url: child.address, retries: 0 });
    expect(await collect(again.pids(3, 0))).toHaveLength(3);
  }, 60_000);
});

describe('streams with worker-thread executors', () => {
  const worker = { kind: 'worker' as const, module: IMPL.pathname, export: 'pidStream', threads: 1 };

  it('refuses one for a stream method at provide(), naming the key and the fix', async () => {
    const app = await testApp({ server: { port: 0 } });
    const perMethod = configErrorOf(() =>
      app.provide(PidStreamDef, pidStream, { methods: { pids: { executor: worker } } }),
    );
    expect(perMethod).toBeInstanceOf(ConfigError);
    expect(perMethod.key).toMatch(/methods\.pids\.executor$/);
    expect(perMethod.message).toMatch(/worker-thread executors do not serve streams/);
    expect(perMethod.message).toContain("methods.pids.executor: 'loop'");
    const perService = configErrorOf(() => app.provide(PidStreamDef, pidStream, { executor: worker }));
    expect(perService.key).toMatch(/executor$/);
    expect(perService.key).not.toContain('methods.');
    expect(perService.message).toContain('pids, a server stream');
    expect(perService.message).toContain("methods.pids.executor: 'loop'");
  });

  it('the fix: the stream methods on the loop, the rest in a thread; the stream is served', async () => {
    const app = await testApp({ server: { port: 0 } });
    app.provide(PidStreamDef, pidStream, { executor: worker, methods: { pids: { executor: 'loop' } } });
    await app.start();
    const consumer = await testApp();
    const ref = consumer.refer(PidStreamDef, { url: app.address!, retries: 0 });
    expect(await collect(ref.pids(100, 0))).toEqual(Array.from({ length: 100 }, () => process.pid));
    expect(await ref.where()).toMatch(/^thread \d+$/);
  }, 60_000);
});

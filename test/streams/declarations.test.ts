/**
 * Stream declarations: a wrong one is a ConfigError at defineService (an unknown kind, a stream that
 * is also oneway, cached or mocked) or at provide (a worker-thread executor); in-process (injvm)
 * streams; and the typed proxy: `tsc` rejects a stream method used as a promise, a
 * unary one used as a stream, and a client stream given no AsyncIterable (the `@ts-expect-error` lines
 * fail the type check when the types stop rejecting them).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, type Implementation, type Remote, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { configErrorOf } from '../support/config-error-of.js';
import { waitFor } from '../support/wait-for.js';
import { type Probe, type Streaming, streaming, streamingImpl, type Tick } from './fixture.js';

afterEach(closeAll);

interface Watch {
  watch(symbol: string): AsyncIterable<Tick>;
}

describe('stream declarations', () => {
  it('refuses an unknown stream kind', () => {
    const error = configErrorOf(() =>
      defineService<Watch>('decl.Unknown', { methods: { watch: { stream: 'both' as 'bidi' } } }),
    );
    expect(error.key).toBe('defineService(decl.Unknown).methods.watch.stream');
    expect(error.message).toContain("'server', 'client' or 'bidi'");
  });

  it('refuses a stream that is also oneway, cached or mocked', () => {
    for (const extra of [{ oneway: true }, { mock: () => 1 }]) {
      const error = configErrorOf(() =>
        defineService<Watch>('decl.Unary', { methods: { watch: { stream: 'server', ...extra } } }),
      );
      expect(error.message).toContain(Object.keys(extra)[0]!);
    }
    const cached = configErrorOf(() =>
      defineService<Watch>('decl.Cached', {
        methods: { watch: { stream: 'server', idempotent: true, cache: { ttlMs: 1000, max: 10 } } },
      }),
    );
    expect(cached.message).toContain('cache');
  });

  it('refuses a worker-thread executor for a stream method at provide()', async () => {
    const app = await testApp({ server: { port: 0 } });
    const probe: Probe = { produced: 0, finallyRan: 0, aborted: 0 };
    const error = configErrorOf(() =>
      app.provide(streaming, streamingImpl(probe), {
        methods: { count: { executor: { kind: 'worker', module: '/nonexistent/impl.js' } } },
      }),
    );
    expect(error.key).toContain('methods.count.executor');
    expect(error.message).toContain('do not serve streams');
  });

  it('streams in-process (injvm): each kind, in order, and a break stops the provider', async () => {
    const probe: Probe = { produced: 0, finallyRan: 0, aborted: 0 };
    const app = await testApp({ server: { port: 0 } });
    app.provide(streaming, streamingImpl(probe));
    await app.start();
    const ref = app.refer(streaming, { retries: 0 });
    const seen: number[] = [];
    for await (const tick of ref.count(1_000, -1)) seen.push(tick.n);
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, n) => n));
    expect(probe.finallyRan).toBe(1);
    const numbers = (async function* () {
      for (let n = 1; n <= 10; n++) yield n;
    })();
    expect(await ref.sum('local', numbers)).toEqual({ label: 'local', total: 55, count: 10 });
    const doubled: number[] = [];
    const ticks = (async function* () {
      for (let n = 0; n < 5; n++) yield { n };
    })();
    for await (const tick of ref.collect(ticks)) doubled.push(tick.n);
    expect(doubled).toEqual([5, 0, 2, 4, 6, 8]);
    // a flood stays a few messages ahead of a reader that breaks
    let read = 0;
    for await (const _tick of ref.flood(10)) if (++read === 5) break;
    await waitFor(() => probe.finallyRan === 2 || undefined);
    expect(probe.produced - 1_000).toBeLessThan(5 + 20);
    // an error mid-stream, as over the wire
    const error = await (async () => {
      for await (const _tick of ref.count(10, 3));
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(RpcError.is(error) && error.code).toBe('ProviderError');
  });
});

/** Never run: only type-checked (`tsc -p tsconfig.check.json`). */
function typeChecks(ref: Remote<Streaming>): void {
  const ticks: AsyncIterable<Tick> = ref.count(3, -1);
  void ticks;
  const answer: Promise<{ total: number }> = ref.sum('x', (async function* () {})());
  void answer;
  // @ts-expect-error a server stream is an AsyncIterable, not a Promise
  const awaited: Promise<unknown> = ref.count(3, -1);
  void awaited;
  // @ts-expect-error a unary method is a Promise, not an AsyncIterable
  const iterated: AsyncIterable<unknown> = ref.ping();
  void iterated;
  // @ts-expect-error a client stream's last argument is an AsyncIterable
  void ref.sum('x', [1, 2, 3]);
  const impl: Implementation<Watch> = {
    async *watch(symbol: string) {
      yield { n: symbol.length };
    },
  };
  void impl;
  const wrong: Implementation<Watch> = {
    // @ts-expect-error a server stream's implementation returns an AsyncIterable
    async watch(symbol: string) {
      return { n: symbol.length };
    },
  };
  void wrong;
}
void typeChecks;

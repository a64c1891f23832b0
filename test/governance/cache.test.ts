/**
 * The consumer's result cache over real sockets (docs/governance.md): hits by arguments, TTL, LRU bound,
 * single-flight for concurrent misses, failures not kept, `withOptions(ref, { cache: false })`, and a
 * cache on a method that is not idempotent refused (at compile time on a declaration, at run time always).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, defineService, withOptions } from '../../src/index.js';
import { FlakyImpl, type FlakyService } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const CachedDef = defineService<FlakyService>('test.Cached', {
  methods: { read: { idempotent: true, cache: { ttlMs: 60_000, max: 100 } }, write: {}, budget: {} },
});

const PlainDef = defineService<FlakyService>('test.Cached', {
  methods: { read: { idempotent: true }, write: {}, budget: {} },
});

async function setup(options: Parameters<typeof testApp>[0] = {}) {
  const impl = new FlakyImpl('p');
  const provider = await testApp({ application: 'p' });
  provider.provide(PlainDef, impl);
  await provider.start();
  const consumer = await testApp(options);
  return { impl, consumer, url: provider.address! };
}

describe('result cache', () => {
  it('answers repeated arguments from the cache, different ones from the provider', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url });
    for (let i = 0; i < 10; i++) expect(await ref.read('x')).toBe('p:x');
    expect(impl.reads).toBe(1);
    expect(await ref.read('y')).toBe('p:y');
    expect(await ref.read('y')).toBe('p:y');
    expect(impl.reads).toBe(2);
    // not idempotent, not cached
    await ref.write('w');
    await ref.write('w');
    expect(impl.writes).toEqual(['w', 'w']);
  });

  it('keys by the serialized arguments: values JSON would confuse stay apart', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url });
    const date = new Date(Date.UTC(2024, 0, 1));
    await (ref.read as (key: unknown) => Promise<string>)(date);
    await (ref.read as (key: unknown) => Promise<string>)(date.toISOString());
    expect(impl.reads).toBe(2);
  });

  it('forgets an answer after ttlMs', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url, methods: { read: { cache: { ttlMs: 100, max: 10 } } } });
    await ref.read('x');
    await ref.read('x');
    expect(impl.reads).toBe(1);
    await waitFor(async () => {
      await ref.read('x');
      return impl.reads === 2;
    }, 5_000);
  });

  it('keeps at most max answers, dropping the least recently used', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url, methods: { read: { cache: { ttlMs: 60_000, max: 2 } } } });
    await ref.read('a');
    await ref.read('b');
    await ref.read('a'); // a is now the most recently used
    await ref.read('c'); // drops b
    expect(impl.reads).toBe(3);
    await ref.read('a');
    await ref.read('c');
    expect(impl.reads).toBe(3);
    await ref.read('b');
    expect(impl.reads).toBe(4);
  });

  it('makes one call for concurrent misses of the same arguments (single-flight)', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url, timeoutMs: 20_000 });
    impl.mode = 'hang';
    const calls = Array.from({ length: 5 }, () => ref.read('x'));
    const other = ref.read('y');
    await waitFor(() => impl.reads === 2);
    impl.mode = 'ok';
    impl.releaseAll();
    expect(await Promise.all(calls)).toEqual(['p:x', 'p:x', 'p:x', 'p:x', 'p:x']);
    expect(await other).toBe('p:y');
    expect(impl.reads).toBe(2);
  });

  it('keeps no failure: the next call asks the provider again', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url, retries: 0 });
    impl.mode = 'overloaded';
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'Overloaded' });
    impl.mode = 'ok';
    expect(await ref.read('x')).toBe('p:x');
    expect(await ref.read('x')).toBe('p:x');
    expect(impl.reads).toBe(2);
  });

  it('withOptions(ref, { cache: false }) goes past the cache; cache: false on the reference switches it off', async () => {
    const { impl, consumer, url } = await setup();
    const ref = consumer.refer(CachedDef, { url });
    await ref.read('x');
    await withOptions(ref, { cache: false }).read('x');
    await withOptions(ref, { cache: false }).read('fresh');
    expect(impl.reads).toBe(3);
    await ref.read('x');
    expect(impl.reads).toBe(3);
    await ref.read('fresh'); // the answer of a call past the cache was not kept
    expect(impl.reads).toBe(4);
    const off = consumer.refer(CachedDef, { url, methods: { read: { cache: false } } });
    await off.read('x');
    expect(impl.reads).toBe(5);
  });

  it('refuses a cache on a method that is not idempotent, at definition and at refer()', async () => {
    expect(() =>
      defineService<FlakyService>('test.BadCache', {
        // @ts-expect-error a cache needs idempotent: true beside it
        methods: { read: { cache: { ttlMs: 1000, max: 10 } }, write: {}, budget: {} },
      }),
    ).toThrow(ConfigError);
    expect(() =>
      defineService<FlakyService>('test.BadCache', {
        methods: { read: { idempotent: true, cache: { ttlMs: 0, max: 10 } }, write: {}, budget: {} },
      }),
    ).toThrow(/defineService\(test\.BadCache\)\.methods\.read\.cache\.ttlMs/);
    const consumer = await testApp();
    expect(() =>
      consumer.refer(PlainDef, {
        url: '127.0.0.1:1',
        methods: { write: { cache: { ttlMs: 1000, max: 10 } } },
      }),
    ).toThrow(/refer\(test\.Cached\)\.methods\.write\.cache .*idempotent/);
    expect(() =>
      consumer.refer(CachedDef, { url: '127.0.0.1:1', methods: { read: { idempotent: false } } }),
    ).toThrow(ConfigError);
    expect(() =>
      consumer.refer(PlainDef, {
        url: '127.0.0.1:1',
        methods: { read: { cache: { ttlMs: 1000, max: -1 } } },
      }),
    ).toThrow(/refer\(test\.Cached\)\.methods\.read\.cache\.max/);
  });
});

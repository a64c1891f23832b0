/**
 * Stream faults of the test kit (`provider.streamFault`): messages dropped, each message delayed, the
 * stream cut with a Network error after N messages (after those N, never retried), for a number of
 * streams or until healed; on server, client and two-way streams; a class implementation keeps its
 * `this` (private fields) through the kit's wrapping; the handler stops when a cut ends the stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, RpcError } from '../../src/index.js';
import { createTestKit, type TestKit } from '../../src/testing/index.js';

interface Feed {
  numbers(count: number): AsyncIterable<number>;
  total(values: AsyncIterable<number>): Promise<number>;
  doubled(values: AsyncIterable<number>): AsyncIterable<number>;
  ping(): Promise<string>;
}
const FeedDef = defineService<Feed>('kit.Feed', {
  methods: {
    numbers: { stream: 'server' },
    total: { stream: 'client' },
    doubled: { stream: 'bidi' },
    ping: { idempotent: true },
  },
});

class FeedImpl implements Feed {
  readonly #name = 'feed';
  stopped = 0;
  async *numbers(count: number) {
    try {
      for (let n = 0; n < count; n++) yield n;
    } finally {
      this.stopped++;
    }
  }
  async total(values: AsyncIterable<number>) {
    let sum = 0;
    for await (const value of values) sum += value;
    return sum;
  }
  async *doubled(values: AsyncIterable<number>) {
    for await (const value of values) yield value * 2;
  }
  async ping() {
    return this.#name;
  }
}

const kits: TestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.close()));
});

async function setup() {
  const kit = createTestKit();
  kits.push(kit);
  const impl = new FeedImpl();
  const provider = await kit.provider(FeedDef, impl);
  const app = await kit.consumer();
  return { provider, impl, ref: app.refer(FeedDef, { retries: 2 }) };
}

async function read(stream: AsyncIterable<number>): Promise<{ got: number[]; error?: RpcError }> {
  const got: number[] = [];
  try {
    for await (const n of stream) got.push(n);
    return { got };
  } catch (error) {
    expect(RpcError.is(error)).toBe(true);
    return { got, error: error as RpcError };
  }
}

async function* values(...list: number[]) {
  for (const value of list) yield value;
}

describe('test kit stream faults', () => {
  it('drop: the messages it picks never reach the consumer, the rest in order', async () => {
    const { provider, ref } = await setup();
    provider.streamFault('numbers', { drop: (index) => index % 3 === 1 }, { times: 1 });
    expect(await read(ref.numbers(8))).toEqual({ got: [0, 2, 3, 5, 6] });
    // one stream only: the next is whole
    expect(await read(ref.numbers(3))).toEqual({ got: [0, 1, 2] });
  });

  it('delayMs: every message is held that long', async () => {
    const { provider, ref } = await setup();
    provider.streamFault('numbers', { delayMs: 40 });
    const started = performance.now();
    expect(await read(ref.numbers(5))).toEqual({ got: [0, 1, 2, 3, 4] });
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 * 40 - 5);
    provider.heal('numbers');
    const healed = performance.now();
    expect(await read(ref.numbers(5))).toEqual({ got: [0, 1, 2, 3, 4] });
    expect(performance.now() - healed).toBeLessThan(5 * 40);
  });

  it('cutAfter: the stream fails with Network after N messages, is not retried, and the handler stops', async () => {
    const { provider, impl, ref } = await setup();
    provider.streamFault('numbers', { cutAfter: 3 });
    const { got, error } = await read(ref.numbers(1_000));
    expect(got).toEqual([0, 1, 2]);
    expect(error?.code).toBe('Network');
    expect(error?.message).toMatch(/cut the stream after 3 messages/);
    expect(error?.details['started']).toBe(true);
    expect(provider.calls.filter((call) => call.method === 'numbers')).toHaveLength(1);
    expect(impl.stopped).toBe(1);
    // cutAfter 0: before the first message
    provider.heal().streamFault('numbers', { cutAfter: 0 }, { times: 1 });
    const first = await read(ref.numbers(5));
    expect(first.got).toEqual([]);
    expect(first.error?.code).toBe('Network');
  });

  it("apply to a client stream's messages on their way to the handler, and to a two-way stream's answers", async () => {
    const { provider, ref } = await setup();
    provider.streamFault('total', { drop: (_index, message) => message === 100 }, { times: 1 });
    expect(await ref.total(values(1, 100, 2, 100, 3))).toBe(6);
    provider.streamFault('total', { cutAfter: 2 }, { times: 1 });
    await expect(ref.total(values(1, 2, 3, 4))).rejects.toMatchObject({ code: 'Network' });
    provider.streamFault('*', { cutAfter: 1 }, { times: 1 });
    expect(await read(ref.doubled(values(5, 6, 7)))).toMatchObject({ got: [10], error: { code: 'Network' } });
    // unary methods and the implementation's own `this` are untouched
    expect(await ref.ping()).toBe('feed');
    expect(await read(ref.doubled(values(5, 6)))).toEqual({ got: [10, 12] });
  });

  it('refuses malformed faults with a TypeError naming them', async () => {
    const { provider } = await setup();
    expect(() => provider.streamFault('numbers', { cutAfter: -1 })).toThrow(
      /streamFault\("numbers"\): cutAfter must be a whole number/,
    );
    expect(() => provider.streamFault('numbers', { drop: 2 as never })).toThrow(/drop must be a function/);
  });
});

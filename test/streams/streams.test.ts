/**
 * Streaming calls over real sockets, TCP and TLS alike: each kind delivers 100,000 messages in order
 * and complete; a `break` or an `AbortSignal` cancels the stream on both sides (the provider's
 * `finally` ran, its signal aborted, no stream left in either side's table); a provider error after N
 * messages reaches the caller after those N, with its code and declared fields; the whole-stream
 * deadline; half-close; a slow reader holds the producer to the window; the stream limits.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppOptions } from '../../src/index.js';
import { RpcError, withOptions } from '../../src/index.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { openStreams, type Probe, StreamFailed, streaming, streamingImpl, type Tick } from './fixture.js';

afterEach(closeAll);

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());

describe.each(['tcp', 'tls'] as const)('streams over %s', (wire) => {
  /** The provider's and consumers' options for `wire`. */
  const serverOptions = (): AppOptions['server'] =>
    wire === 'tls' ? { port: 0, tls: { key: pki.server.key, cert: pki.server.cert } } : { port: 0 };
  const consumerOptions = (): AppOptions => (wire === 'tls' ? { consumer: { tls: { ca: pki.ca } } } : {});

  async function start(probe: Probe, providerOptions: AppOptions = {}) {
    const provider = await testApp({
      application: 'stream-provider',
      ...providerOptions,
      server: { ...serverOptions(), ...providerOptions.server },
    });
    provider.provide(streaming, streamingImpl(probe));
    await provider.start();
    expect(provider.address!.startsWith('tls://')).toBe(wire === 'tls');
    const consumer = await testApp({ application: 'stream-consumer', ...consumerOptions() });
    const ref = consumer.refer(streaming, { url: provider.address!, retries: 0 });
    return { provider, consumer, ref };
  }

  const newProbe = (): Probe => ({ produced: 0, finallyRan: 0, aborted: 0 });

  async function* numbers(count: number): AsyncIterable<number> {
    for (let n = 0; n < count; n++) yield n;
  }

  async function* ticks(count: number): AsyncIterable<Tick> {
    for (let n = 0; n < count; n++) yield { n };
  }

  async function failureOf(run: () => Promise<unknown>): Promise<RpcError> {
    const error = await run().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(RpcError.is(error)).toBe(true);
    return error as RpcError;
  }

  describe('every kind', () => {
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

    it('break cancels a server stream on both sides: finally ran, signal aborted, tables empty', async () => {
      const probe = newProbe();
      const { provider, consumer, ref } = await start(probe);
      let seen = 0;
      const iteration = ref.count(1_000_000, -1);
      for await (const _tick of iteration) {
        if (++seen === 1) {
          expect(openStreams(provider)).toBe(1);
          expect(openStreams(consumer)).toBe(1);
        }
        if (seen === 5) break;
      }
      await waitFor(() => probe.finallyRan === 1 || undefined, 5000);
      expect(probe.aborted).toBe(1);
      expect(probe.produced).toBeLessThan(1_000_000);
      expect(openStreams(consumer)).toBe(0);
      await waitFor(() => openStreams(provider) === 0 || undefined, 5000);
      expect(await ref.ping()).toBe('pong');
    });

    it('break cancels a two-way stream, its input stops too', async () => {
      const probe = newProbe();
      const { provider, consumer, ref } = await start(probe);
      let seen = 0;
      for await (const _tick of ref.echo(ticks(1_000_000))) if (++seen === 10) break;
      await waitFor(() => probe.finallyRan === 1 || undefined, 5000);
      expect(openStreams(consumer)).toBe(0);
      await waitFor(() => openStreams(provider) === 0 || undefined, 5000);
    });

    it('an AbortSignal cancels the stream: the iteration throws Cancelled', async () => {
      const probe = newProbe();
      const { provider, ref } = await start(probe);
      const controller = new AbortController();
      const error = await failureOf(async () => {
        for await (const tick of withOptions(ref, { signal: controller.signal }).slow(5)) {
          if (tick.n === 3) controller.abort();
        }
      });
      expect(error.code).toBe('Cancelled');
      await waitFor(() => probe.finallyRan === 1 || undefined, 5000);
      await waitFor(() => openStreams(provider) === 0 || undefined, 5000);
    });

    it('an AbortSignal cancels a client stream: the handler’s signal aborts, its input stops, tables empty', async () => {
      const { provider, consumer, ref } = await start(newProbe());
      const controller = new AbortController();
      let sent = 0;
      async function* endless(): AsyncIterable<Tick> {
        for (;;) {
          sent++;
          yield { n: sent };
        }
      }
      const answer = withOptions(ref, { signal: controller.signal }).stall(endless());
      await waitFor(() => openStreams(provider) === 1 || undefined, 5000);
      controller.abort();
      const error = await failureOf(() => answer);
      expect(error.code).toBe('Cancelled');
      const stopped = sent;
      await waitFor(() => openStreams(provider) === 0 || undefined, 5000);
      expect(openStreams(consumer)).toBe(0);
      // the input stopped at the window: the handler never read, so the consumer sent what the credit allowed
      expect(stopped).toBeLessThan(100_000);
      expect(sent).toBe(stopped);
      expect(await ref.ping()).toBe('pong');
    });

    it('the deadline ends the whole stream with Timeout on both sides', async () => {
      const probe = newProbe();
      const { provider, consumer, ref } = await start(probe);
      let seen = 0;
      const started = Date.now();
      const error = await failureOf(async () => {
        for await (const _tick of withOptions(ref, { timeoutMs: 400 }).slow(20)) seen++;
      });
      expect(error.code).toBe('Timeout');
      expect(seen).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(5_000);
      await waitFor(() => probe.finallyRan === 1 || undefined, 5000);
      expect(openStreams(consumer)).toBe(0);
      await waitFor(() => openStreams(provider) === 0 || undefined, 5000);
    });

    it('half-close: the input ends, the provider answers after it, the caller keeps reading', async () => {
      const { ref } = await start(newProbe());
      const answers: number[] = [];
      for await (const tick of ref.collect(ticks(50))) answers.push(tick.n);
      expect(answers[0]).toBe(50);
      expect(answers.slice(1)).toEqual(Array.from({ length: 50 }, (_, n) => n * 2));
    });

    it('a slow reader: the producer stays within the window; a unary call on the connection answers promptly', async () => {
      const probe = newProbe();
      const { ref } = await start(probe);
      const messageBytes = 20 + 1_010; // a frame header and a ~1 KiB message
      const bound = Math.ceil((64 * 1024) / messageBytes) + 3;
      let consumed = 0;
      let most = 0;
      for await (const _tick of ref.flood(1_000)) {
        consumed++;
        await new Promise((resolve) => setTimeout(resolve, 10));
        most = Math.max(most, probe.produced - consumed);
        if (consumed === 20) {
          const asked = Date.now();
          expect(await ref.ping()).toBe('pong');
          expect(Date.now() - asked).toBeLessThan(1_000);
        }
        if (consumed === 100) break;
      }
      // it did run ahead (the window is used), but never past it
      expect(most).toBeGreaterThan(10);
      expect(most).toBeLessThanOrEqual(bound);
    });

    it('refuses a stream beyond server.maxOpenStreams across connections, and counts down as they end', async () => {
      const { provider, ref } = await start(newProbe(), { server: { port: 0, maxOpenStreams: 2 } });
      const other = await testApp({ application: 'second-consumer', ...consumerOptions() });
      const second = other.refer(streaming, { url: provider.address!, retries: 0 });
      const open = [ref.slow(50)[Symbol.asyncIterator](), second.slow(50)[Symbol.asyncIterator]()];
      await Promise.all(open.map((iterator) => iterator.next()));
      expect(openStreams(provider)).toBe(2);
      const error = await failureOf(async () => {
        for await (const _tick of second.slow(50)) break;
      });
      expect(error.code).toBe('Overloaded');
      expect(error.message).toContain('server.maxOpenStreams');
      await Promise.all(open.map((iterator) => iterator.return?.()));
      await waitFor(() => openStreams(provider) === 0 || undefined);
      for await (const tick of second.slow(5)) if (tick.n === 1) break;
    });

    it('refuses a stream beyond maxStreamsPerConnection with Overloaded, naming the limit', async () => {
      const { ref } = await start(newProbe(), { maxStreamsPerConnection: 2 });
      const open = [ref.slow(50)[Symbol.asyncIterator](), ref.slow(50)[Symbol.asyncIterator]()];
      await Promise.all(open.map((iterator) => iterator.next()));
      const error = await failureOf(async () => {
        for await (const _tick of ref.slow(50)) break;
      });
      expect(error.code).toBe('Overloaded');
      expect(error.message).toContain('maxStreamsPerConnection');
      await Promise.all(open.map((iterator) => iterator.return?.()));
      expect(await ref.ping()).toBe('pong');
    });
  });
});

/**
 * Streams and the rest of the provider and the cluster, over real sockets: an open stream holds its
 * `executes` slot until it ends; graceful shutdown lets an open stream run until the shutdown deadline,
 * then ends it with Shutdown; a dropped connection fails the iteration with Network after the messages
 * delivered (never retried); a stream fails over only before it was sent (a dead first address);
 * the idle timeout. Each over TCP and over TLS.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppOptions, type CallistoApp, RpcError } from '../../src/index.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { openStreams, type Probe, streaming, streamingImpl } from './fixture.js';

afterEach(closeAll);

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());

const newProbe = (): Probe => ({ produced: 0, finallyRan: 0, aborted: 0 });

async function failureOf(run: () => Promise<unknown>): Promise<RpcError> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RpcError.is(error), String(error)).toBe(true);
  return error as RpcError;
}

describe.each(['tcp', 'tls'] as const)('streams in the provider and the cluster, over %s', (wire) => {
  /** A provider app serving over `wire`. */
  const serve = (options: AppOptions = {}) =>
    testApp({
      ...options,
      server: wire === 'tls' ? { port: 0, tls: { key: pki.server.key, cert: pki.server.cert } } : { port: 0 },
    });
  /** A consumer app for `wire`. */
  const client = () => testApp(wire === 'tls' ? { consumer: { tls: { ca: pki.ca } } } : {});

  it('an open stream holds its executes slot until it ends', async () => {
    const provider = await serve();
    provider.provide(streaming, streamingImpl(newProbe()), {
      methods: { slow: { limits: { executes: 1 } } },
    });
    await provider.start();
    const consumer = await client();
    const ref = consumer.refer(streaming, { url: provider.address!, retries: 0 });
    const first = ref.slow(20)[Symbol.asyncIterator]();
    await first.next();
    const refused = await failureOf(async () => {
      for await (const _tick of ref.slow(20)) break;
    });
    expect(refused.code).toBe('Overloaded');
    await first.return?.();
    await waitFor(() => openStreams(provider) === 0 || undefined);
    // the slot is free again
    for await (const tick of ref.slow(5)) if (tick.n === 1) break;
  });

  it('graceful shutdown: an open stream runs until the deadline, then ends with Shutdown (not failed over)', async () => {
    const probe = newProbe();
    const spare = newProbe();
    const provider = await serve({ shutdownTimeoutMs: 600 });
    provider.provide(streaming, streamingImpl(probe));
    await provider.start();
    const other = await serve();
    other.provide(streaming, streamingImpl(spare));
    await other.start();
    const consumer = await client();
    // the stream goes to the first address; Shutdown before anything ran would go to the other
    const ref = consumer.refer(streaming, {
      url: `${provider.address!},${other.address!}`,
      retries: 2,
      loadbalance: 'roundrobin',
    });
    let seen = 0;
    let closing: Promise<void> | undefined;
    let seenAtClose = 0;
    const error = await failureOf(async () => {
      for await (const _tick of ref.slow(20)) {
        seen++;
        if (seen === 3) {
          seenAtClose = seen;
          closing = (probe.produced > 0 ? provider : other).close();
        }
      }
    });
    await closing;
    expect(error.code).toBe('Shutdown');
    // it kept streaming while the provider drained
    expect(seen).toBeGreaterThan(seenAtClose + 5);
    // a started stream is never sent elsewhere, not even for a Shutdown
    expect(Math.min(probe.produced, spare.produced)).toBe(0);
    // the handler was at an await: its finally runs as it reaches its next yield
    await waitFor(() => probe.finallyRan + spare.finallyRan === 1 || undefined);
  });

  it('a dropped connection fails the iteration with Network after the messages delivered, never retried', async () => {
    const probes = [newProbe(), newProbe()];
    const providers: CallistoApp[] = [];
    for (const probe of probes) {
      const provider = await serve();
      provider.provide(streaming, streamingImpl(probe));
      await provider.start();
      providers.push(provider);
    }
    const consumer = await client();
    // idempotent, with retries: a unary call would be sent to the other provider; a started stream not
    const ref = consumer.refer(streaming, {
      url: providers.map((provider) => provider.address!).join(','),
      retries: 2,
      methods: { slow: { idempotent: true } },
    });
    let seen = 0;
    let served = -1;
    const error = await failureOf(async () => {
      for await (const _tick of ref.slow(10)) {
        if (++seen === 3) {
          served = probes.findIndex((probe) => probe.produced > 0);
          providers[served]!.destroy();
        }
      }
    });
    expect(error.code).toBe('Network');
    expect(seen).toBe(3);
    expect(probes[1 - served]!.produced).toBe(0);
    expect(openStreams(consumer)).toBe(0);
  });

  it('fails over before the stream was sent: a dead first address', async () => {
    // a port nothing listens on any more
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const deadAddress = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const provider = await serve();
    provider.provide(streaming, streamingImpl(newProbe()));
    await provider.start();
    const consumer = await client();
    const ref = consumer.refer(streaming, {
      url: [deadAddress, provider.address!].join(','),
      retries: 2,
      loadbalance: 'roundrobin',
    });
    for (let round = 0; round < 2; round++) {
      const seen: number[] = [];
      for await (const tick of ref.count(3, -1)) seen.push(tick.n);
      expect(seen).toEqual([0, 1, 2]);
    }
  });

  it('the idle timeout ends a stream with no message for streamIdleTimeoutMs', async () => {
    const probe = newProbe();
    const provider = await serve({ streamIdleTimeoutMs: 200 });
    provider.provide(streaming, streamingImpl(probe));
    await provider.start();
    const consumer = await client();
    const ref = consumer.refer(streaming, { url: provider.address!, retries: 0 });
    const started = Date.now();
    const error = await failureOf(async () => {
      for await (const _tick of ref.slow(5_000)) break;
    });
    // answered at the idle timeout, not when the handler's await ends
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error.code).toBe('Timeout');
    expect(error.message).toContain('no message');
    await waitFor(() => openStreams(provider) === 0 || undefined);
  });
});

/**
 * `/stats` over HTTP: per method and side, the min, max and mean latency since start and per window
 * (`statsWindowMs`: the window being filled, then the whole one before it), and the last failure with
 * the reference the caller was quoted (a scrubbed system error: the same on the provider's and the
 * consumer's entry, and in the provider's log line). The admin page shows them too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const ClockDef = defineService<{
  ping(): Promise<void>;
  wait(ms: number): Promise<number>;
  disk(): Promise<void>;
}>('test.Clock', { methods: { ping: {}, wait: {}, disk: {} } });

const clock = {
  async ping() {},
  async wait(ms: number) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return ms;
  },
  async disk() {
    // a system error: scrubbed for the caller, logged on the provider under a reference
    throw Object.assign(new Error('EIO: i/o error, read'), { errno: -5, code: 'EIO', syscall: 'read' });
  },
};

interface Figures {
  calls: number;
  minMs: number;
  maxMs: number;
  meanMs: number;
  startTime: number;
  endTime: number;
}
interface Entry {
  side: string;
  method: string;
  calls: number;
  latencyMs: { p50: number; min: number; max: number; mean: number };
  latencyWindow: { ms: number; current?: Figures; previous?: Figures };
  lastFailure?: { code: string; message: string; ref?: string };
}

async function stats(port: number): Promise<Entry[]> {
  const answer = await fetch(`http://127.0.0.1:${port}/stats`);
  return ((await answer.json()) as { methods: Entry[] }).methods;
}

describe('/stats latency figures', () => {
  it('min, max and mean per method since start and per window, on both sides', async () => {
    const provider = await testApp({ admin: { enabled: true }, statsWindowMs: 1_500 });
    provider.provide(ClockDef, clock);
    await provider.start();
    const consumer = await testApp({ admin: { enabled: true }, statsWindowMs: 1_500 });
    await consumer.start();
    const clockRef = consumer.refer(ClockDef, { url: provider.address!, timeoutMs: 5_000 });
    // the connection opened first: what a call of `wait` takes is its own time
    await clockRef.ping();
    for (const ms of [20, 120, 60]) await clockRef.wait(ms);

    for (const [app, side] of [
      [provider, 'provider'],
      [consumer, 'consumer'],
    ] as const) {
      const entry = (await stats(app.adminPort!)).find((m) => m.side === side && m.method === 'wait')!;
      expect(entry.calls, side).toBe(3);
      const { min, max, mean } = entry.latencyMs;
      // as long as the handler waited at least, and the slowest call set the max
      expect(min, side).toBeGreaterThanOrEqual(19);
      expect(min, side).toBeLessThan(max);
      expect(max, side).toBeGreaterThanOrEqual(119);
      expect(mean, side).toBeGreaterThan(min);
      expect(mean, side).toBeLessThan(max);
      expect(mean, side).toBeGreaterThanOrEqual((20 + 120 + 60) / 3 - 1);
      // the window being filled saw the same three calls
      expect(entry.latencyWindow.ms).toBe(1_500);
      expect(entry.latencyWindow.current).toMatchObject({ calls: 3, minMs: min, maxMs: max });
      expect(entry.latencyWindow.current!.meanMs).toBeCloseTo(mean, 2);
    }

    // once its time is over the window is the previous one, whole; a new call starts the next
    const previous = await waitFor(
      async () => {
        const entry = (await stats(provider.adminPort!)).find((m) => m.method === 'wait')!;
        return entry.latencyWindow.current === undefined ? entry.latencyWindow.previous : undefined;
      },
      10_000,
      { message: 'the first window reported as the previous one' },
    );
    expect(previous).toMatchObject({ calls: 3 });
    expect(previous!.endTime - previous!.startTime).toBe(1_500);
    await clockRef.wait(1);
    const after = (await stats(provider.adminPort!)).find((m) => m.method === 'wait')!;
    const current = after.latencyWindow.current!;
    expect(current).toMatchObject({ calls: 1 });
    expect(current.minMs).toBe(current.maxMs);
    expect(current.maxMs).toBeLessThan(previous!.maxMs);
    // since start: all four calls
    expect(after.calls).toBe(4);
    expect(after.latencyMs.min).toBeLessThanOrEqual(current.minMs);
    expect(after.latencyMs.max).toBe(previous!.maxMs);

    // the admin page shows them
    const page = await (
      await fetch(`http://127.0.0.1:${provider.adminPort}/stats`, { headers: { accept: 'text/html' } })
    ).text();
    expect(page).toContain('latencyWindow');
    expect(page).toContain('meanMs');
  });

  it('the last failure carries the reference the caller was quoted and the provider logged', async () => {
    const logged: string[] = [];
    const provider = await testApp({
      admin: { enabled: true },
      logger: {
        debug() {},
        info() {},
        warn: (line) => logged.push(line),
        error: (line) => logged.push(line),
      },
    });
    provider.provide(ClockDef, clock);
    await provider.start();
    const consumer = await testApp({ admin: { enabled: true } });
    await consumer.start();
    const clockRef = consumer.refer(ClockDef, { url: provider.address!, timeoutMs: 5_000 });
    const error = (await clockRef.disk().catch((e: unknown) => e)) as Error;
    const quoted = /under ref (\S+)\)/.exec(error.message)?.[1];
    expect(quoted, error.message).toBeDefined();

    const served = (await stats(provider.adminPort!)).find((m) => m.method === 'disk')!;
    expect(served.lastFailure).toMatchObject({ code: 'ProviderError', ref: quoted });
    const called = (await stats(consumer.adminPort!)).find((m) => m.method === 'disk')!;
    expect(called.lastFailure).toMatchObject({ code: 'ProviderError', ref: quoted });
    expect(logged.some((line) => line.includes(quoted!))).toBe(true);
    // a failure without one has none
    const impatient = consumer.refer(ClockDef, { url: provider.address!, timeoutMs: 30 });
    await expect(impatient.wait(300)).rejects.toThrow();
    const timedOut = (await stats(consumer.adminPort!)).find((m) => m.method === 'wait')!;
    expect(timedOut.lastFailure).toMatchObject({ code: 'Timeout' });
    expect(timedOut.lastFailure!.ref).toBeUndefined();
  });
});

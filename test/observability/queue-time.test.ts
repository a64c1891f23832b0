/**
 * Queue time per method on the provider, over a real connection: how long a call waited between being
 * read and its method starting to run. Ten calls of a method that burns 20 ms of CPU, read together,
 * run one after the other: the later ones waited for the earlier, and `/stats` (`queueMs`) and
 * `/metrics` (`callisto_call_queue_seconds`) say so; a call nothing ran before did not wait.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

const Burner = defineService<{ burn(ms: number): Promise<number>; ping(): Promise<string> }>('test.Burner', {
  methods: { burn: {}, ping: {} },
});

const burner = {
  burn(ms: number) {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // the loop is busy: the calls read with this one wait
    }
    return Promise.resolve(ms);
  },
  ping: () => Promise.resolve('pong'),
};

interface Entry {
  side: string;
  method: string;
  queueMs?: { p50: number; p99: number; mean: number };
}

describe('queue time per method', () => {
  it('counts the wait between read and run: calls read together behind a busy method queue, a lone call does not', async () => {
    const provider = await testApp({ admin: { enabled: true } });
    provider.provide(Burner, burner);
    await provider.start();
    const consumer = await testApp({ consumer: { retries: 0, snapshotDir: '' } });
    const ref = consumer.refer(Burner, { url: provider.address!, timeoutMs: 10_000 });
    expect(await ref.ping()).toBe('pong');
    // sent in one tick, one write: read by the provider in one chunk, run one after the other
    expect(await Promise.all(Array.from({ length: 10 }, () => ref.burn(20)))).toHaveLength(10);

    const stats = (await (await fetch(`http://127.0.0.1:${provider.adminPort}/stats`)).json()) as {
      methods: Entry[];
    };
    const of = (method: string) => stats.methods.find((m) => m.side === 'provider' && m.method === method)!;
    const burn = of('burn').queueMs!;
    // 0, 20, 40 … 180 ms: a mean of 90 if they all came in one chunk; well above nothing in any case
    expect(burn.mean).toBeGreaterThanOrEqual(20);
    expect(burn.p99).toBeGreaterThanOrEqual(60);
    expect(of('ping').queueMs!.p99).toBeLessThan(20);
    // the consumer side has no queue time
    expect(stats.methods.find((m) => m.side === 'consumer' && m.method === 'burn')).toBeUndefined();

    const metrics = await (await fetch(`http://127.0.0.1:${provider.adminPort}/metrics`)).text();
    const count = /callisto_call_queue_seconds_count\{[^}]*method="burn"[^}]*\} (\d+)/.exec(metrics);
    expect(count?.[1]).toBe('10');
    const sum = /callisto_call_queue_seconds_sum\{[^}]*method="burn"[^}]*\} ([\d.e-]+)/.exec(metrics);
    expect(Number(sum?.[1])).toBeGreaterThanOrEqual(0.2);
  });
});

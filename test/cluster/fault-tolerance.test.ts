import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError, withOptions } from '../../src/index.js';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyConsumer, flakyProviders } from '../support/cluster-setup.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

/** A port nothing listens on: connecting is refused. */
async function deadAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

describe('failover', () => {
  it('retries an idempotent call on another provider after a provider-side overload', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, { loadbalance: 'roundrobin' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ref.read(`k${i}`)));
    expect(results.every((r) => r.startsWith('p1:'))).toBe(true);
  });

  it('sends any call elsewhere when the first provider refuses the connection (never sent)', async () => {
    const providers = await flakyProviders(1);
    const { ref } = await flakyConsumer(providers, {
      url: [await deadAddress(), providers[0]!.address],
      loadbalance: 'roundrobin',
      outlierDetection: false,
    });
    for (let i = 0; i < 6; i++) expect(await ref.write(`w${i}`)).toBe(`p0:w${i}`);
    expect(providers[0]!.impl.writes).toHaveLength(6);
  });

  it('never sends a non-idempotent call twice when its provider dies mid-call', async () => {
    const providers = await flakyProviders(2);
    for (const p of providers) p.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, { loadbalance: 'roundrobin' });
    const calls = Array.from({ length: 10 }, (_, i) =>
      ref.write(`w${i}`).catch((e: unknown) => e as RpcError),
    );
    await waitFor(() => providers[0]!.impl.writes.length + providers[1]!.impl.writes.length === 10);
    const onFirst = [...providers[0]!.impl.writes];
    providers[0]!.app.destroy();
    providers[1]!.impl.releaseAll();
    const outcomes = await Promise.all(calls);
    const failed = outcomes.filter((o): o is RpcError => RpcError.is(o));
    expect(failed.length).toBe(onFirst.length);
    expect(failed.every((e) => e.code === 'Network')).toBe(true);
    const all = [...providers[0]!.impl.writes, ...providers[1]!.impl.writes];
    expect(new Set(all).size).toBe(all.length); // each write executed exactly once
  });

  it('retries an idempotent call when its provider dies mid-call', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, { loadbalance: 'roundrobin' });
    const calls = Array.from({ length: 10 }, (_, i) => ref.read(`r${i}`));
    await waitFor(() => providers[0]!.impl.reads >= 5);
    providers[0]!.app.destroy();
    const results = await Promise.all(calls);
    expect(results.every((r) => r.startsWith('p1:'))).toBe(true);
  });

  it('never retries a business error', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'business';
    const { ref } = await flakyConsumer(providers);
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'ProviderError' });
    expect(providers.reduce((sum, p) => sum + p.impl.reads, 0)).toBe(1);
  });

  it('stops after `retries` extra attempts', async () => {
    const providers = await flakyProviders(4);
    for (const p of providers) p.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, { retries: 2, outlierDetection: false });
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'Overloaded' });
    expect(providers.reduce((sum, p) => sum + p.impl.reads, 0)).toBe(3);
  });
});

describe('other strategies', () => {
  it('failfast makes exactly one attempt', async () => {
    const providers = await flakyProviders(2);
    for (const p of providers) p.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, { cluster: 'failfast' });
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'Overloaded' });
    expect(providers[0]!.impl.reads + providers[1]!.impl.reads).toBe(1);
  });

  it('failsafe resolves undefined on failure', async () => {
    const providers = await flakyProviders(1);
    providers[0]!.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, { cluster: 'failsafe' });
    expect(await ref.write('audit')).toBeUndefined();
  });

  it('failback resolves undefined and retries in the background until it succeeds', async () => {
    const providers = await flakyProviders(1);
    providers[0]!.impl.mode = 'overloaded';
    const app = await testApp();
    const ref = app.refer(FlakyDef, {
      url: providers[0]!.address,
      cluster: 'failback',
      outlierDetection: false,
    });
    expect(await ref.write('event-1')).toBeUndefined();
    providers[0]!.impl.mode = 'ok';
    await waitFor(() => providers[0]!.impl.writes.filter((w) => w === 'event-1').length === 2, 5_000);
  });

  it('forking answers from the fastest provider and cancels the rest', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, { cluster: 'forking', forks: 2 });
    const started = Date.now();
    expect(await ref.read('k')).toBe('p1:k');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(providers[0]!.impl.reads).toBe(1);
    providers[0]!.impl.releaseAll();
  });

  it('broadcast calls every provider and reports which failed', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { cluster: 'broadcast' });
    expect(((await ref.write('all')) as unknown as string[]).sort()).toEqual(['p0:all', 'p1:all', 'p2:all']);
    providers[2]!.impl.mode = 'business';
    const error = (await ref.write('again').catch((e: unknown) => e)) as RpcError;
    expect(error.message).toMatch(/1 of 3 providers failed/);
    expect(error.details.failed).toEqual([expect.objectContaining({ address: providers[2]!.address })]);
    expect(providers.every((p) => p.impl.writes.includes('again'))).toBe(true);
  });
});

describe('deadlines', () => {
  it('sends the remaining budget; the provider sees the caller deadline', async () => {
    const providers = await flakyProviders(1);
    const { ref } = await flakyConsumer(providers, { timeoutMs: 2_000 });
    const budget = await ref.budget();
    expect(budget).toBeGreaterThan(1_500);
    expect(budget).toBeLessThanOrEqual(2_000);
    expect(await withOptions(ref, { timeoutMs: 500 }).budget()).toBeLessThanOrEqual(500);
  });

  it('one deadline covers every attempt of a call', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'slow';
    const { ref } = await flakyConsumer(providers, { timeoutMs: 200, retries: 5 });
    const started = Date.now();
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'Timeout' });
    expect(Date.now() - started).toBeLessThan(600);
  });
});

describe('outlier ejection', () => {
  it('ejects a failing provider, then probes it and takes it back once it recovers', async () => {
    const providers = await flakyProviders(3);
    providers[0]!.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, {
      loadbalance: 'roundrobin',
      ejectAfterFailures: 3,
      ejectionMs: 1_000, // long enough that no probe falls inside the 60 calls below, even on a slow machine
    });
    for (let i = 0; i < 30; i++) await ref.read(`a${i}`);
    const readsWhileFailing = providers[0]!.impl.reads;
    expect(readsWhileFailing).toBeLessThanOrEqual(4); // 3 to eject, perhaps 1 probe
    for (let i = 0; i < 30; i++) await ref.read(`b${i}`);
    expect(providers[0]!.impl.reads - readsWhileFailing).toBeLessThanOrEqual(1);
    providers[0]!.impl.mode = 'ok';
    await waitFor(async () => {
      await ref.read('probe');
      return providers[0]!.impl.reads > readsWhileFailing + 3;
    }, 5_000);
  });

  it('never ejects more than the configured share of providers', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, {
      ejectAfterFailures: 1,
      ejectionMs: 60_000,
      maxEjectionRatio: 0.4,
      retries: 0,
    });
    for (let i = 0; i < 20; i++) await ref.read('x').catch(() => undefined);
    for (const p of providers) p.impl.mode = 'ok';
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) seen.add((await ref.read('y')).split(':')[0]!);
    expect(seen.size).toBe(2); // one of three ejected, two still selectable
  });
});

describe('degradation and stubs', () => {
  it("mock: 'force' never calls a provider", async () => {
    const providers = await flakyProviders(1);
    const { ref } = await flakyConsumer(providers, {
      mock: 'force',
      mockImpl: { read: (k: string) => `cached:${k}` },
    });
    expect(await ref.read('x')).toBe('cached:x');
    expect(providers[0]!.impl.reads).toBe(0);
  });

  it("mock: 'fail' calls, and answers from the mock when the call fails", async () => {
    const providers = await flakyProviders(1);
    const { ref } = await flakyConsumer(providers, {
      mock: 'fail',
      mockImpl: { read: (k: string) => `fallback:${k}` },
      retries: 0,
    });
    expect(await ref.read('x')).toBe('p0:x');
    providers[0]!.impl.mode = 'overloaded';
    expect(await ref.read('y')).toBe('fallback:y');
    providers[0]!.impl.mode = 'business';
    await expect(ref.read('z')).rejects.toMatchObject({ code: 'ProviderError' });
  });

  it('a stub wraps the reference with local logic before the remote call', async () => {
    const providers = await flakyProviders(1);
    const { ref } = await flakyConsumer(providers, {
      stub: (remote) => {
        const cache = new Map<string, Promise<string>>();
        return {
          read(key: string) {
            if (!key) return Promise.reject(new TypeError('key required'));
            if (!cache.has(key)) cache.set(key, remote.read(key));
            return cache.get(key)!;
          },
        };
      },
    });
    expect(await ref.read('a')).toBe('p0:a');
    expect(await ref.read('a')).toBe('p0:a');
    expect(providers[0]!.impl.reads).toBe(1);
    await expect(ref.read('')).rejects.toThrow('key required');
    expect(await ref.write('w')).toBe('p0:w');
  });

  it('sticky keeps using the same provider while it is healthy', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { sticky: true });
    const first = (await ref.read('a')).split(':')[0];
    for (let i = 0; i < 20; i++) expect((await ref.read('b')).split(':')[0]).toBe(first);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyConsumer, flakyProviders } from '../support/cluster-setup.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
const proxies: TcpProxy[] = [];
afterEach(async () => {
  await closeAll();
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const who = (answer: string) => answer.split(':')[0]!;

describe('load balancing over real providers', () => {
  it('roundrobin spreads calls evenly', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { loadbalance: 'roundrobin' });
    const counts = new Map<string, number>();
    for (let i = 0; i < 90; i++) {
      const name = who(await ref.read(`k${i}`));
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect([...counts.values()]).toEqual([30, 30, 30]);
  });

  it('consistenthash sends the same key to the same provider, and different keys across providers', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { loadbalance: 'consistenthash' });
    const owners = new Map<string, string>();
    for (let i = 0; i < 60; i++) owners.set(`user-${i}`, who(await ref.read(`user-${i}`)));
    for (let i = 0; i < 60; i++) expect(who(await ref.read(`user-${i}`))).toBe(owners.get(`user-${i}`));
    expect(new Set(owners.values()).size).toBe(3);
  });

  it('leastactive keeps new calls away from a provider whose calls hang', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    // suspicion off: on a starved machine the hanging provider's pong can come after suspectAfterMs,
    // and its hanging calls would be retried elsewhere, leaving it with none in flight (an idle provider
    // to leastactive); this test is about the balancer
    const { ref } = await flakyConsumer(
      providers,
      { loadbalance: 'leastactive', timeoutMs: 10_000 },
      { suspectAfterMs: 0 },
    );
    const hanging = Array.from({ length: 4 }, () => ref.read('slow').catch(() => undefined));
    await waitFor(() => providers[0]!.impl.reads >= 1);
    for (let i = 0; i < 20; i++) expect(who(await ref.read(`fast${i}`))).toBe('p1');
    providers[0]!.impl.releaseAll();
    await Promise.all(hanging);
  });

  it('p2c sends new calls to the less loaded of two providers (calls hang on the other)', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    // suspicion off, as above
    const { ref } = await flakyConsumer(
      providers,
      { loadbalance: 'p2c', timeoutMs: 10_000 },
      { suspectAfterMs: 0 },
    );
    // p2c draws both of two providers; until p0 holds a call they tie, so a read lands there (once it
    // holds one, its cost, latency x (in flight + 1), is above p1's whenever p1 has none in flight)
    const hanging: Promise<unknown>[] = [];
    while (providers[0]!.impl.reads < 1) {
      hanging.push(ref.read(`warm${hanging.length}`).catch(() => undefined));
      await waitFor(() => providers[0]!.impl.reads + providers[1]!.impl.reads >= hanging.length);
    }
    for (let i = 0; i < 40; i++) expect(who(await ref.read(`fast${i}`))).toBe('p1');
    providers[0]!.impl.releaseAll();
    await Promise.all(hanging);
  });

  it('weights from the registry shape the share: 100 and 300 get one call in four and three in four', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-weights-'));
    dirs.push(dir);
    const registry = `file://${dir}`;
    const impls = await Promise.all(
      [
        ['light', 100],
        ['heavy', 300],
      ].map(async ([name, weight]) => {
        const impl = new FlakyImpl(name as string);
        const app = await testApp({
          application: name as string,
          registry,
          server: { weight: weight as number },
        });
        app.provide(FlakyDef, impl);
        await app.start();
        return impl;
      }),
    );
    // No warm-up, so the announced weights apply from the first call.
    const consumer = await testApp({ registry, consumer: { snapshotDir: '', warmupMs: 0 } });
    const ref = consumer.refer(FlakyDef, { loadbalance: 'roundrobin' });
    await ref.read('first');
    const source = [...appInternals(consumer).consumer.directories().values()][0]!;
    await waitFor(() => source.list().length === 2, 10_000);
    const [light, heavy] = impls;
    const before = { light: light!.reads, heavy: heavy!.reads };
    for (let i = 0; i < 80; i++) await ref.read(`k${i}`);
    expect(light!.reads - before.light).toBe(20);
    expect(heavy!.reads - before.heavy).toBe(60);
  });

  it('shortestresponse learns round trips from heartbeats, also of a provider it never called, and prefers the shorter', async () => {
    const providers = await flakyProviders(2);
    // p0 behind 50 ms each way (about 100 ms round trip), p1 behind 5 ms (about 10 ms).
    const slow = await startTcpProxy(providers[0]!.address, { delayMs: 50 });
    const fast = await startTcpProxy(providers[1]!.address, { delayMs: 5 });
    proxies.push(slow, fast);
    const consumer = await testApp({ heartbeatIntervalMs: 300 });
    // Another reference (its own endpoints and stats) opens both connections; the balanced reference
    // makes no call until heartbeats have measured them.
    const opener = consumer.refer(FlakyDef, { url: [fast.address, slow.address], loadbalance: 'roundrobin' });
    await opener.read('open-1');
    await opener.read('open-2');
    const ref = consumer.refer(FlakyDef, {
      url: [slow.address, fast.address],
      loadbalance: 'shortestresponse',
    });
    const endpoints = () => {
      const key = [...appInternals(consumer).consumer.directories().keys()].find((k) =>
        k.endsWith(`url:${slow.address},${fast.address}`),
      );
      return key === undefined ? [] : appInternals(consumer).consumer.directories().get(key)!.list();
    };
    // The reference's provider list (and the endpoints' stats) exists from its first call: one call to
    // one of the two; the other is measured by heartbeats only.
    await ref.budget();
    const before = { p0: providers[0]!.impl.reads, p1: providers[1]!.impl.reads };
    await waitFor(
      () => endpoints().length === 2 && endpoints().every((e) => e.stats.meanLatencyMs > 0),
      10_000,
    );
    const [slowEndpoint, fastEndpoint] = endpoints();
    expect(slowEndpoint!.stats.meanLatencyMs).toBeGreaterThan(fastEndpoint!.stats.meanLatencyMs);
    for (let i = 0; i < 20; i++) expect(who(await ref.read(`k${i}`))).toBe('p1');
    expect(providers[0]!.impl.reads).toBe(before.p0);
    expect(providers[1]!.impl.reads - before.p1).toBe(20);
  });
});

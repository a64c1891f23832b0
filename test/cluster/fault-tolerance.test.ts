import diagnosticsChannel from 'node:diagnostics_channel';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import {
  CHANNEL_NAMES,
  type ClientCallMessage,
  type Logger,
  RpcError,
  withOptions,
} from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyConsumer, flakyProviders } from '../support/cluster-setup.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function registryDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-failback-'));
  dirs.push(dir);
  return `file://${dir}`;
}

/** A logger that keeps every line, for tests that wait for what the cluster layer reports. */
function linesLogger(): { logger: Logger; lines: string[]; has(pattern: RegExp): boolean } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  return {
    logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') },
    lines,
    has: (pattern) => lines.some((line) => pattern.test(line)),
  };
}

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

  it('stops retrying when the retry budget runs out, and says so', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'overloaded';
    const log = linesLogger();
    const app = await testApp({ application: 'consumer', logger: log.logger, logLevel: 'debug' });
    // Budget: no share of calls (ratio 0), only the reserve of 10 retries/s over the 10 s window: 100.
    // Adaptive throttling off: it would refuse most of these attempts before they are sent (its own
    // test: test/overload/adaptive-throttling.test.ts); this one counts what the budget lets through.
    const ref = app.refer(FlakyDef, {
      url: providers.map((p) => p.address),
      retries: 2,
      retryBudgetRatio: 0,
      outlierDetection: false,
      adaptiveThrottling: false,
    });
    for (let i = 0; i < 80; i++)
      await expect(ref.read(`k${i}`)).rejects.toMatchObject({ code: 'Overloaded' });
    // 80 calls wanted 160 retries; 100 were granted (the test runs well inside one window): the first 50
    // calls made 3 attempts each, the last 30 one each, refused their first retry, and said so: once,
    // not 30 times (one line per 10 s, with how many it left out: an overload must not flood the log).
    expect(providers.reduce((sum, p) => sum + p.impl.reads, 0)).toBe(50 * 3 + 30);
    expect(log.lines.filter((line) => /retry budget exhausted, not retrying/.test(line))).toHaveLength(1);
    // the 100 retries made are one info line too, the first (per error code, per 10 s)
    expect(log.lines.filter((line) => /attempt \d failed on .*retrying in/.test(line))).toHaveLength(1);
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

  it('failback survives its providers all leaving (NoProvider in a retry), gives up, and frees its queue slot', async () => {
    // The reproduction: one provider answers Overloaded, then shuts down. Its background retries
    // then find no provider at all; before the fix select() threw NoProvider inside the retry timer, an
    // uncaught exception that killed the consumer, and the queue counter never went down.
    const registry = registryDir();
    const impl = new FlakyImpl('p0');
    impl.mode = 'overloaded';
    const provider = await testApp({ application: 'p0', registry });
    provider.provide(FlakyDef, impl);
    await provider.start();
    const log = linesLogger();
    const consumer = await testApp({
      registry,
      logger: log.logger,
      logLevel: 'debug',
      // No empty-list protection: the unregister empties the list at once. The retries run at 0.3, 0.9,
      // 2.1 and 4.5 s: the last ones find the list empty even on a slow machine.
      consumer: {
        snapshotDir: '',
        emptyProtection: false,
        failbackDelayMs: 300,
        failbackAttempts: 4,
        failbackQueueSize: 1,
      },
    });
    const ref = consumer.refer(FlakyDef, { cluster: 'failback', outlierDetection: false });
    expect(await ref.write('e1')).toBeUndefined();
    expect(impl.writes).toEqual(['e1']);
    await provider.close(); // unregisters: the consumer's list becomes empty
    const source = [...appInternals(consumer).consumer.directories().values()][0]!;
    await waitFor(() => source.list().length === 0, 10_000);
    await waitFor(() => log.has(/gave up after 4 retries: NoProvider/), 10_000, {
      message: `no give-up line; log: ${log.lines.join(' | ')}`,
    });
    // The slot of the given-up call is free again: the next failure is queued, not dropped as "queue full".
    expect(await ref.write('e2')).toBeUndefined();
    expect(log.lines.filter((line) => /retrying in the background: NoProvider/.test(line))).toHaveLength(1);
    expect(log.has(/queue full/)).toBe(false);
    // ...and a third one, with e2 still queued, is dropped: the queue is bounded at 1.
    expect(await ref.write('e3')).toBeUndefined();
    expect(log.has(/queue full \(1\), test\.Flaky\.write dropped/)).toBe(true);
  });

  it('failback settings are consumer keys, validated at start with the key named', async () => {
    for (const [key, value] of [
      ['failbackQueueSize', 0],
      ['failbackAttempts', 1.5],
      ['failbackDelayMs', -1],
    ] as const) {
      await expect(testApp({ consumer: { [key]: value } })).rejects.toThrow(
        new RegExp(`consumer\\.${key} = ${value}`),
      );
    }
    const app = await testApp();
    expect(() => app.refer(FlakyDef, { url: '127.0.0.1:1', failbackAttempts: 0 })).toThrow(
      /refer\(test\.Flaky\)\.failbackAttempts = 0/,
    );
  });

  it('failback delivers a call made while no provider existed, once one appears', async () => {
    const registry = registryDir();
    const log = linesLogger();
    const consumer = await testApp({
      registry,
      logger: log.logger,
      logLevel: 'debug',
      consumer: { snapshotDir: '', failbackDelayMs: 200, failbackAttempts: 6 },
    });
    const ref = consumer.refer(FlakyDef, { cluster: 'failback' });
    expect(await ref.write('early')).toBeUndefined();
    // A background retry has run into the empty list (and the consumer lives on).
    await waitFor(() => log.has(/retry 1 of 6 failed \(NoProvider/), 10_000);
    const impl = new FlakyImpl('late');
    const provider = await testApp({ application: 'late', registry });
    provider.provide(FlakyDef, impl);
    await provider.start();
    await waitFor(() => impl.writes.includes('early'), 20_000);
    expect(impl.writes).toEqual(['early']);
  });

  it('forking answers from the fastest provider and cancels the rest', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang'; // p0 never answers on its own
    const { app, ref } = await flakyConsumer(providers, {
      methods: { read: { cluster: 'forking', forks: 2 } },
    });
    const attempts: ClientCallMessage[] = [];
    const onAttempt = (message: unknown) => attempts.push(message as ClientCallMessage);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.clientCall, onAttempt);
    try {
      expect(await ref.read('k')).toBe('p1:k');
      expect(providers[0]!.impl.reads).toBe(1); // the loser got the call too
      // ...and is cancelled as soon as the winner answers: nothing of it stays pending on its connection.
      const loser = appInternals(app)
        .consumer.pool.connections()
        .find((connection) => connection.address === providers[0]!.address)!;
      expect(loser.inFlight).toBe(0);
      await waitFor(() =>
        attempts.some((a) => a.address === providers[0]!.address && a.error === 'Cancelled'),
      );
      expect(attempts.find((a) => a.address === providers[1]!.address)?.error).toBeUndefined();
    } finally {
      diagnosticsChannel.unsubscribe(CHANNEL_NAMES.clientCall, onAttempt);
      providers[0]!.impl.releaseAll();
    }
  });

  it('failback never sends a non-idempotent call again once it may have run (handler slower than the timeout)', async () => {
    // The reproduction: a write whose handler takes 400 ms, a 200 ms timeout. The call times out
    // while the handler runs; before the fix the background retries sent it again, and it ran 3 times.
    const executed = new Map<string, number>();
    const impl = new FlakyImpl('p0');
    const slowWrite = async (key: string): Promise<string> => {
      executed.set(key, (executed.get(key) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      return `p0:${key}`;
    };
    const provider = await testApp({ application: 'p0' });
    provider.provide(FlakyDef, { read: (k) => impl.read(k), write: slowWrite, budget: () => impl.budget() });
    await provider.start();
    const log = linesLogger();
    const consumer = await testApp({ logger: log.logger, logLevel: 'debug' });
    const ref = consumer.refer(FlakyDef, {
      url: provider.address!,
      cluster: 'failback',
      timeoutMs: 200,
      failbackAttempts: 2,
      failbackDelayMs: 50,
      outlierDetection: false,
    });
    expect(await ref.write('once')).toBeUndefined();
    // Background retries would run 50 and 150 ms after the timeout; the handler ends 400 ms after the
    // start. Waiting 800 ms past the failure (not a synchronisation: the time in which a wrong second
    // execution would show) and then counting proves it ran once.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(executed.get('once')).toBe(1);
    expect(log.has(/not retried, it may have run and is not idempotent/)).toBe(true);
    // An idempotent method is retried in the background after the same timeout.
    const reads = consumer.refer(FlakyDef, {
      url: provider.address!,
      cluster: 'failback',
      timeoutMs: 200,
      failbackDelayMs: 50,
      outlierDetection: false,
      methods: { write: { idempotent: true } },
    });
    expect(await reads.write('again')).toBeUndefined();
    await waitFor(() => (executed.get('again') ?? 0) >= 2, 5_000);
  });

  it('forking is refused at refer() for a method that is not idempotent, with the method and the fix', async () => {
    const providers = await flakyProviders(2);
    const app = await testApp();
    expect(() => app.refer(FlakyDef, { url: providers.map((p) => p.address), cluster: 'forking' })).toThrow(
      /refer\(test\.Flaky\)\.cluster = "forking".*write is not idempotent.*methods: \{ write: \{ cluster: 'failover' \} \}/,
    );
    expect(() =>
      app.refer(FlakyDef, {
        url: providers.map((p) => p.address),
        methods: { write: { cluster: 'forking' } },
      }),
    ).toThrow(/refer\(test\.Flaky\)\.methods\.write\.cluster = "forking"/);
    await expect(
      testApp({ consumer: { cluster: 'forking' } }).then((a) =>
        a.refer(FlakyDef, { url: providers[0]!.address }),
      ),
    ).rejects.toThrow(/consumer\.cluster = "forking"/);
    // declared idempotent on the reference: accepted, and sent to both providers, each executing it once
    const ref = app.refer(FlakyDef, {
      url: providers.map((p) => p.address),
      cluster: 'forking',
      methods: { write: { idempotent: true }, budget: { cluster: 'failover' } },
    });
    expect(await ref.write('w')).toMatch(/^p[01]:w$/);
    await waitFor(() => providers.every((p) => p.impl.writes.length === 1));
    expect(providers.map((p) => p.impl.writes)).toEqual([['w'], ['w']]);
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
    expect(budget).toBeGreaterThan(1_000); // most of it: generous for a loaded machine
    expect(budget).toBeLessThanOrEqual(2_000);
    expect(await withOptions(ref, { timeoutMs: 500 }).budget()).toBeLessThanOrEqual(500);
  });

  it('one deadline covers every attempt of a call', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'slow'; // 300 ms, longer than the whole deadline
    const { ref } = await flakyConsumer(providers, { timeoutMs: 200, retries: 5 });
    const started = Date.now();
    await expect(ref.read('x')).rejects.toMatchObject({ code: 'Timeout' });
    // The first attempt used the whole budget: no retry was started after it (a deadline per attempt
    // would have made six, 1.2 s).
    expect(providers.reduce((sum, p) => sum + p.impl.reads, 0)).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('outlier ejection', () => {
  it('ejects a failing provider, then probes it and takes it back once it recovers', async () => {
    const providers = await flakyProviders(3);
    providers[0]!.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, {
      loadbalance: 'roundrobin',
      ejectAfterFailures: 3,
      ejectionMs: 3_000, // long enough that no probe falls inside the 60 calls below, even on a slow machine
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
    }, 20_000);
  });

  it('never ejects more than the configured share of providers', async () => {
    const providers = await flakyProviders(3);
    for (const p of providers) p.impl.mode = 'overloaded';
    const { ref } = await flakyConsumer(providers, {
      ejectAfterFailures: 1,
      ejectionMs: 60_000,
      maxEjectionRatio: 0.4,
      retries: 0,
      // the 20 refusals would otherwise let adaptive throttling refuse some of the calls that follow
      adaptiveThrottling: false,
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

  it('sticky keeps using the same provider while it is healthy, then sticks to another', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, {
      sticky: true,
      ejectAfterFailures: 1,
      ejectionMs: 60_000,
    });
    const first = (await ref.read('a')).split(':')[0];
    for (let i = 0; i < 20; i++) expect((await ref.read('b')).split(':')[0]).toBe(first);
    // The sticky provider turns unhealthy: one call finds out (Overloaded, ejected) and fails over...
    const sticky = providers.find((p) => p.name === first)!;
    sticky.impl.mode = 'overloaded';
    const readsBefore = sticky.impl.reads;
    const second = (await ref.read('c')).split(':')[0];
    expect(second).not.toBe(first);
    // ...and from then on every call sticks to the provider that answered, none goes to the ejected one.
    for (let i = 0; i < 20; i++) expect((await ref.read('d')).split(':')[0]).toBe(second);
    expect(sticky.impl.reads).toBe(readsBefore + 1);
  });
});

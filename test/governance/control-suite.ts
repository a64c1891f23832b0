/**
 * Runtime control through the registry (docs/governance.md), the same cases on every registry kind
 * against real servers: the override record's contract (the registry API, the record layout read with
 * the engine's own client, bad records skipped), and end to end with real apps over TCP (disable a
 * provider, restore it, weights, mock force/fail/off, a whole service disabled, a consumer restarted
 * keeping the override, calls in flight finishing).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceKey } from '../../src/core/service-key.js';
import { type CallistoApp, defineService, RpcError } from '../../src/index.js';
import { createRegistry } from '../../src/registry/create-registry.js';
import { createRegistryControl, type RegistryControl } from '../../src/registry/index.js';
import { emptyOverrides } from '../../src/registry/override-record.js';
import { OverrideConflictError } from '../../src/registry/override-update.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import type { OverrideChange, OverrideUpdateOptions, Registry } from '../../src/registry/registry.js';
import { captureLogger } from '../chaos/support/log-capture.js';
import { FlakyImpl, type FlakyService } from '../fixtures/flaky-service.js';
import type { RawStore } from '../registry/fixtures/raw-store.js';
import { readEntry } from '../registry/fixtures/read-entry.js';
import { providerRecord } from '../registry/fixtures/records.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { startControlWriter } from './support/control-writers.js';

export interface ControlTarget {
  kind: string;
  /** The registry address the cases use. */
  address(): string;
  /** Writes entries by hand with the engine's own client. */
  rawStore(): Promise<RawStore>;
}

/** A service of its own per test (the suites share the servers). */
function uniqueService() {
  const name = `governance.Svc${randomUUID().slice(0, 8)}`;
  const definition = defineService<FlakyService>(name, {
    methods: { read: { idempotent: true }, write: {}, budget: {} },
  });
  return { name, definition, key: { name, version: '1.0.0', group: '' } };
}

/** Calls `read` `n` times and counts the answers by provider name (`a:x` -> a). */
async function spread(call: () => Promise<string>, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const name = (await call()).split(':')[0]!;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

export function runControlSuite(target: ControlTarget): void {
  const { kind } = target;
  const cleanups: Array<() => Promise<void> | void> = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  const tempDir = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-governance-'));
    dirs.push(dir);
    return dir;
  };

  const openRegistry = async (log?: (level: string, message: string) => void): Promise<Registry> => {
    const registry = await createRegistry(target.address(), { ttlMs: 3_000, ...(log ? { log } : {}) });
    cleanups.push(() => registry.close());
    return registry;
  };

  const control = (): RegistryControl => {
    const value = createRegistryControl(target.address(), { registry: { ttlMs: 3_000 } });
    cleanups.push(() => value.close());
    return value;
  };

  const provider = async (name: string, service: ReturnType<typeof uniqueService>) => {
    const impl = new FlakyImpl(name);
    const app = await testApp({
      application: name,
      registry: [target.address()],
      registryTtlMs: 3_000,
    });
    app.provide(service.definition, impl);
    await app.start();
    return { app, impl, address: app.address! };
  };

  const consumer = async (options: Parameters<typeof testApp>[0] = {}): Promise<CallistoApp> =>
    testApp({
      application: 'governance-consumer',
      registry: [target.address()],
      registryTtlMs: 3_000,
      consumer: { snapshotDir: tempDir() },
      ...options,
    });

  describe(`runtime control: ${kind}`, () => {
    it('keeps the override record at <root>/<service>:<version>/config, readable with the engine tools', async () => {
      const service = uniqueService();
      const registry = await openRegistry();
      expect(await registry.readOverrides!(service.key)).toEqual(emptyOverrides());
      const overrides = {
        disabled: false,
        disabledProviders: ['127.0.0.1:20880'],
        weights: { '127.0.0.1:20881': 50 },
        mocks: { read: 'force' as const },
      };
      await registry.writeOverrides!(service.key, overrides);
      const where = `/callisto/${servicePathSegment(service.key)}/config`;
      const stored = await readEntry(target.address(), where);
      expect(JSON.parse(stored!)).toEqual(overrides);
      // another instance (another process, as far as the engine knows) reads the same
      const other = await openRegistry();
      expect(await other.readOverrides!(service.key)).toEqual(overrides);
      // overrides that change nothing delete the record
      await registry.writeOverrides!(service.key, emptyOverrides());
      expect(await readEntry(target.address(), where)).toBeUndefined();
    });

    it('loses no change: two writer processes disabling two providers at the same moment, every round', async () => {
      const service = uniqueService();
      const registry = await openRegistry();
      const [first, second] = [providerRecord(service.key, 30101), providerRecord(service.key, 30102)];
      await registry.register(first);
      await registry.register(second);
      const writers = await Promise.all([startControlWriter('one'), startControlWriter('two')]);
      for (const writer of writers) {
        cleanups.push(() => writer.stop());
        await writer.request('open', { address: target.address() });
      }
      const ctl = control();
      const rounds = 10;
      const lost: number[] = [];
      for (let round = 0; round < rounds; round++) {
        await ctl.clear(service.name);
        // both start at the same instant (each has read the providers once already after round 0)
        const at = Date.now() + 150;
        await Promise.all([
          writers[0]!.request('disable', { service: service.name, provider: '127.0.0.1:30101', at }),
          writers[1]!.request('disable', { service: service.name, provider: '127.0.0.1:30102', at }),
        ]);
        const after = await ctl.overrides(service.name);
        if (after.disabledProviders.length !== 2) lost.push(round);
      }
      expect(lost, `rounds that lost a change, of ${rounds}`).toEqual([]);
    });

    it('reports a change that cannot apply: every compare-and-set meets another writer, nothing written', async () => {
      const service = uniqueService();
      const registry = await openRegistry();
      const rival = await openRegistry();
      let rivalWrites = 0;
      const update = registry.updateOverrides!(
        service.key,
        async (current) => {
          // another writer changes the record between this writer's read and its write, every time
          rivalWrites++;
          await rival.writeOverrides!(service.key, {
            ...emptyOverrides(),
            weights: { '127.0.0.1:1': rivalWrites },
          });
          return { ...current, disabled: true };
        },
        { attempts: 3 },
      );
      await expect(update).rejects.toThrow(
        /override record .*config was changed \(or held\) by another writer during each of 3 attempts; this change was not applied/,
      );
      await expect(update).rejects.toBeInstanceOf(OverrideConflictError);
      expect(rivalWrites).toBe(3);
      // the rival's last write stands; the rejected change is nowhere
      expect(await rival.readOverrides!(service.key)).toEqual({
        ...emptyOverrides(),
        weights: { '127.0.0.1:1': 3 },
      });
    });

    it('the control reports a change that cannot apply (an error to its caller), never success', async () => {
      const service = uniqueService();
      const rival = await openRegistry();
      let rivalWrites = 0;
      const ctl = createRegistryControl(target.address(), {
        attempts: 2,
        open: async () => {
          const registry = await openRegistry();
          // every change of this control meets a rival write between its read and its write
          return new Proxy(registry, {
            get(object, property) {
              if (property !== 'updateOverrides') return Reflect.get(object, property);
              return (key: ServiceKey, change: OverrideChange, options?: OverrideUpdateOptions) =>
                object.updateOverrides!(
                  key,
                  async (current) => {
                    rivalWrites++;
                    await rival.writeOverrides!(key, {
                      ...emptyOverrides(),
                      weights: { '127.0.0.1:1': rivalWrites },
                    });
                    return change(current);
                  },
                  options,
                );
            },
          });
        },
      });
      cleanups.push(() => ctl.close());
      await expect(ctl.disable(service.name)).rejects.toThrow(
        /each of 2 attempts; this change was not applied/,
      );
      expect(rivalWrites).toBe(2);
      expect((await rival.readOverrides!(service.key)).disabled).toBe(false);
    });

    it('tells followers of the record every change, from another registry instance', async () => {
      const service = uniqueService();
      const follower = await openRegistry();
      const seen: string[] = [];
      await follower.watchOverrides!(service.key, (overrides) => {
        seen.push(overrides.disabledProviders.join(','));
      });
      expect(seen).toEqual(['']);
      const writer = await openRegistry();
      await writer.writeOverrides!(service.key, { ...emptyOverrides(), disabledProviders: ['10.0.0.1:1'] });
      await waitFor(() => seen.at(-1) === '10.0.0.1:1', 5_000);
      await writer.writeOverrides!(service.key, emptyOverrides());
      await waitFor(() => seen.at(-1) === '', 5_000);
      expect(seen).toEqual(['', '10.0.0.1:1', '']);
    });

    it('skips a malformed record (keeping the last overrides) and a bad entry alone, logging each once', async () => {
      const service = uniqueService();
      const lines: string[] = [];
      const follower = await openRegistry((_level, message) => lines.push(message));
      const seen: Array<ReturnType<typeof emptyOverrides>> = [];
      await follower.watchOverrides!(service.key, (overrides) => seen.push(overrides));
      const raw = await target.rawStore();
      cleanups.push(() => raw.close());
      const where = `/callisto/${servicePathSegment(service.key)}/config`;
      await raw.put(where, JSON.stringify({ disabledProviders: ['127.0.0.1:1'] }));
      await waitFor(() => seen.at(-1)?.disabledProviders[0] === '127.0.0.1:1', 5_000);
      await raw.put(where, '{"disabledProviders": [');
      await waitFor(
        () => lines.some((line) => /skipped override record .*config.*not JSON/.test(line)),
        5_000,
      );
      await raw.put(
        where,
        JSON.stringify({
          disabledProviders: ['127.0.0.1:2', 'no port'],
          weights: { '127.0.0.1:2': -5, '127.0.0.1:3': 20 },
          mocks: { read: 'sometimes', write: 'fail' },
        }),
      );
      await waitFor(() => seen.at(-1)?.disabledProviders[0] === '127.0.0.1:2', 5_000);
      expect(seen.at(-1)).toEqual({
        disabled: false,
        disabledProviders: ['127.0.0.1:2'],
        weights: { '127.0.0.1:3': 20 },
        mocks: { write: 'fail' },
      });
      // the malformed record changed nothing for the followers: the last good overrides stayed
      expect(seen.map((o) => o.disabledProviders.join(','))).toEqual(['', '127.0.0.1:1', '127.0.0.1:2']);
      const problems = lines.filter((line) => /override record/.test(line));
      expect(problems.filter((line) => /not JSON/.test(line))).toHaveLength(1);
      expect(problems.some((line) => /"no port" is not host:port/.test(line))).toBe(true);
      expect(problems.some((line) => /127\.0\.0\.1:2 = -5 is not an integer/.test(line))).toBe(true);
      expect(problems.some((line) => /read = "sometimes"/.test(line))).toBe(true);
      // a record larger than any record may be is skipped too, logged, without being parsed
      await raw.put(where, JSON.stringify({ disabledProviders: ['127.0.0.1:9'], pad: 'x'.repeat(70_000) }));
      await waitFor(
        () => lines.some((line) => /override record .*config.*more than 65536/.test(line)),
        5_000,
      );
      expect(seen.at(-1)?.disabledProviders).toEqual(['127.0.0.1:2']);
      // the registry keeps working
      const lists: number[] = [];
      await follower.subscribe(service.key, (records) => lists.push(records.length));
      expect(lists).toEqual([0]);
    });

    it('refuses an unknown provider, a bad weight and a bad mock mode at the control, naming them', async () => {
      const service = uniqueService();
      const registry = await openRegistry();
      await registry.register(providerRecord(service.key, 30001));
      const ctl = control();
      await expect(ctl.disable(service.name, { provider: '127.0.0.1:30009' })).rejects.toThrow(
        /no provider 127\.0\.0\.1:30009 is registered .* registered: 127\.0\.0\.1:30001/,
      );
      await expect(ctl.disable(service.name, { provider: 'nonsense' })).rejects.toThrow(/host:port/);
      await expect(ctl.setWeight(service.name, '127.0.0.1:30001', -1)).rejects.toThrow(/integer from 0/);
      await expect(ctl.setMock(service.name, 'read', 'sometimes' as never)).rejects.toThrow(
        /force, fail or off/,
      );
      expect(await ctl.overrides(service.name)).toEqual(emptyOverrides());
      await ctl.disable(service.name, { provider: '127.0.0.1:30001' });
      await ctl.setWeight(service.name, '127.0.0.1:30001', 7);
      await ctl.setMock(service.name, 'read', 'fail');
      expect(await ctl.overrides(service.name)).toEqual({
        disabled: false,
        disabledProviders: ['127.0.0.1:30001'],
        weights: { '127.0.0.1:30001': 7 },
        mocks: { read: 'fail' },
      });
      await ctl.clear(service.name);
      expect(await ctl.overrides(service.name)).toEqual(emptyOverrides());
    });

    it('disables one provider: its call count stops growing while the other grows; enable restores it', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const b = await provider('b', service);
      const app = await consumer();
      const ref = app.refer(service.definition, { loadbalance: 'roundrobin' });
      await waitFor(async () => Object.keys(await spread(() => ref.read('x'), 4)).length === 2, 10_000);
      const ctl = control();
      await ctl.disable(service.name, { provider: b.address });
      // applied within about a second (poll 500 ms); generous bound for a loaded machine
      await waitFor(async () => (await spread(() => ref.read('x'), 4)).b === undefined, 10_000);
      const before = { a: a.impl.reads, b: b.impl.reads };
      expect(await spread(() => ref.read('x'), 40)).toEqual({ a: 40 });
      expect(b.impl.reads).toBe(before.b);
      expect(a.impl.reads).toBe(before.a + 40);
      await ctl.enable(service.name, { provider: b.address });
      await waitFor(async () => ((await spread(() => ref.read('x'), 4)).b ?? 0) > 0, 10_000);
    });

    it('lets calls in flight to a provider finish when it is disabled', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const app = await consumer();
      const ref = app.refer(service.definition, { timeoutMs: 20_000 });
      expect(await ref.read('warm')).toBe('a:warm');
      a.impl.mode = 'hang';
      const inFlight = ref.read('held');
      await waitFor(() => a.impl.reads === 2);
      const ctl = control();
      await ctl.disable(service.name, { provider: a.address });
      // probes with a short timeout: until the override is applied they reach the held provider
      const probe = app.refer(service.definition, { timeoutMs: 300, retries: 0 });
      await waitFor(async () => {
        const error = await probe.read('y').catch((e: unknown) => e);
        return RpcError.is(error) && error.code === 'NoProvider';
      }, 10_000);
      a.impl.mode = 'ok';
      a.impl.releaseAll();
      expect(await inFlight).toBe('a:held');
    });

    it('disables a whole service (NoProvider saying why) and enables it again', async () => {
      const service = uniqueService();
      await provider('a', service);
      const app = await consumer();
      const ref = app.refer(service.definition);
      expect(await ref.read('x')).toBe('a:x');
      const ctl = control();
      await ctl.disable(service.name);
      const error = await waitFor(async () => {
        const failure = await ref.read('x').catch((e: unknown) => e);
        return RpcError.is(failure) && failure.code === 'NoProvider' ? failure : undefined;
      }, 10_000);
      expect(error.message).toMatch(/disabled by an operator/);
      await ctl.enable(service.name);
      await waitFor(async () => (await ref.read('x').catch(() => '')) === 'a:x', 10_000);
    });

    it('overrides weights (smooth round robin follows them exactly)', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const b = await provider('b', service);
      const app = await consumer();
      const ref = app.refer(service.definition, { loadbalance: 'roundrobin', warmupMs: 0 });
      await waitFor(async () => Object.keys(await spread(() => ref.read('x'), 4)).length === 2, 10_000);
      const ctl = control();
      await ctl.setWeight(service.name, b.address, 300);
      await waitFor(async () => {
        const counts = await spread(() => ref.read('x'), 40);
        return counts.a === 10 && counts.b === 30;
      }, 10_000);
      expect(await spread(() => ref.read('x'), 40)).toEqual({ a: 10, b: 30 });
      await ctl.setWeight(service.name, a.address, 0);
      await waitFor(async () => (await spread(() => ref.read('x'), 8)).a === undefined, 10_000);
    });

    it('switches a method mock: force (no call), fail (on failure), off', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const app = await consumer();
      const ref = app.refer(service.definition, {
        mockImpl: { read: async (key: string) => `mock:${key}` },
      });
      expect(await ref.read('x')).toBe('a:x');
      const ctl = control();
      await ctl.setMock(service.name, 'read', 'force');
      await waitFor(async () => (await ref.read('x')) === 'mock:x', 10_000);
      const reads = a.impl.reads;
      for (let i = 0; i < 10; i++) expect(await ref.read('y')).toBe('mock:y');
      expect(a.impl.reads).toBe(reads);
      // other methods are not switched
      expect(await ref.write('w')).toBe('a:w');

      await ctl.setMock(service.name, 'read', 'fail');
      await waitFor(async () => (await ref.read('x')) === 'a:x', 10_000);
      a.impl.mode = 'overloaded';
      expect(await ref.read('z')).toBe('mock:z');
      a.impl.mode = 'business';
      await expect(ref.read('z')).rejects.toMatchObject({ code: 'ProviderError' });

      await ctl.setMock(service.name, 'read', 'off');
      a.impl.mode = 'overloaded';
      await waitFor(async () => {
        const error = await ref.read('x').then(
          () => undefined,
          (e: unknown) => e,
        );
        return RpcError.is(error) && error.code === 'Overloaded';
      }, 10_000);
    });

    it('refuses mock force on a method no consumer has a mock for, saying why', async () => {
      const service = uniqueService();
      await provider('a', service);
      const ctl = control();
      await expect(ctl.setMock(service.name, 'read', 'force')).rejects.toThrow(
        /cannot force the mock of governance\.Svc\w+\.read .*no consumer has a mock for it \(no consumer is running\)/,
      );
      const app = await consumer();
      const ref = app.refer(service.definition, { mockImpl: { read: async (key: string) => `mock:${key}` } });
      expect(await ref.read('x')).toBe('a:x');
      const registry = await openRegistry();
      await waitFor(async () => (await registry.consumers!(service.key)).length === 1, 10_000);
      expect((await registry.consumers!(service.key))[0]?.mocks).toEqual(['read']);
      await expect(ctl.setMock(service.name, 'write', 'force')).rejects.toThrow(
        /cannot force the mock of .*\.write .*1 of its 1 consumers have no mock for write: .*governance-consumer.*forced, their calls would fail/,
      );
      expect(await ctl.overrides(service.name)).toEqual(emptyOverrides());
      await ctl.setMock(service.name, 'read', 'force');
      expect((await ctl.overrides(service.name)).mocks).toEqual({ read: 'force' });
    });

    it('a consumer told to force a mock it does not have fails those calls with NoProvider, not undefined', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const app = await consumer();
      const ref = app.refer(service.definition);
      expect(await ref.read('x')).toBe('a:x');
      // written past the control (by hand, or by a control that could not see this consumer)
      const registry = await openRegistry();
      await registry.writeOverrides!(service.key, {
        ...emptyOverrides(),
        mocks: { read: 'force', write: 'fail' },
      });
      const error = await waitFor(async () => {
        const failure = await ref.read('x').then(
          (value) => ({ value }),
          (e: unknown) => e,
        );
        return RpcError.is(failure) ? failure : undefined;
      }, 10_000);
      expect(error.code).toBe('NoProvider');
      expect(error.message).toMatch(
        /forced the mock of governance\.Svc\w+\.read, but this reference has no mock for it .*refused rather than answered with undefined/,
      );
      const reads = a.impl.reads;
      await expect(ref.read('y')).rejects.toMatchObject({ code: 'NoProvider' });
      expect(a.impl.reads).toBe(reads);
      // `fail` without a mock: the failure stays as it is (not an undefined answer)
      a.impl.mode = 'overloaded';
      await expect(ref.write('w')).rejects.toMatchObject({ code: 'Overloaded' });
    });

    it('keeps an override across a consumer restart: the first call already avoids the provider', async () => {
      const service = uniqueService();
      const a = await provider('a', service);
      const b = await provider('b', service);
      const ctl = control();
      await ctl.disable(service.name, { provider: b.address });
      const first = await consumer();
      const ref = first.refer(service.definition, { loadbalance: 'roundrobin' });
      expect(await spread(() => ref.read('x'), 20)).toEqual({ a: 20 });
      await first.close();
      const second = await consumer();
      const again = second.refer(service.definition, { loadbalance: 'roundrobin' });
      expect(await spread(() => again.read('x'), 20)).toEqual({ a: 20 });
      expect(b.impl.reads).toBe(0);
      expect(a.impl.reads).toBe(40);
    });

    it('logs an override naming no provider once, and keeps routing to the others', async () => {
      const service = uniqueService();
      await provider('a', service);
      const registry = await openRegistry();
      await registry.writeOverrides!(service.key, {
        ...emptyOverrides(),
        disabledProviders: ['127.0.0.1:1'],
      });
      const capture = captureLogger();
      const app = await consumer({ logger: capture.logger, logLevel: 'warn' });
      const ref = app.refer(service.definition);
      for (let i = 0; i < 5; i++) expect(await ref.read('x')).toBe('a:x');
      const lines = capture.lines.filter((line) => /provider 127\.0\.0\.1:1 is not among/.test(line.message));
      expect(lines).toHaveLength(1);
    });
  });
}

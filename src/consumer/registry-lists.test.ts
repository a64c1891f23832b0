import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { providerRecord } from '../../test/registry/fixtures/records.js';
import { waitFor } from '../../test/support/wait-for.js';
import type { ServiceKey } from '../core/service-key.js';
import { createFileRegistry } from '../registry/file-registry.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { ProviderListener, Registry, RegistryStatus } from '../registry/registry.js';
import { parseRegistryAddress } from '../registry/registry-address.js';
import { followRegistryLists, type RegistryLists } from './registry-lists.js';

const key: ServiceKey = { name: 'demo.Users', version: '1.0.0', group: '' };

const record = (port: number, overrides: Partial<ProviderRecord> = {}): ProviderRecord =>
  providerRecord(key, port, overrides);

/** A registry whose lists the test pushes by hand (a pure consumer of the contract needs no more). */
interface FakeRegistry extends Registry {
  push(list: ProviderRecord[]): void;
  readonly listeners: number;
}

function fakeRegistry(): FakeRegistry {
  const listeners = new Set<ProviderListener>();
  const waiting: Array<() => void> = [];
  let current: ProviderRecord[] | undefined;
  return {
    kind: 'fake',
    status: 'connected' as RegistryStatus,
    async register() {},
    async unregister() {},
    async registerConsumer() {},
    async unregisterConsumer() {},
    subscribe(_key, listener) {
      listeners.add(listener);
      const unsubscribe = () => listeners.delete(listener);
      if (current) {
        listener(current);
        return Promise.resolve(unsubscribe);
      }
      return new Promise((resolve) => waiting.push(() => resolve(unsubscribe)));
    },
    onStatus: () => () => {},
    async close() {},
    push(list) {
      current = list;
      for (const listener of listeners) listener(list);
      for (const resolve of waiting.splice(0)) resolve();
    },
    get listeners() {
      return listeners.size;
    },
  };
}

const ports = (list: readonly ProviderRecord[]) => list.map((r) => r.port);

describe('service directory', () => {
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const close of closers.splice(0).reverse()) await close();
  });
  const track = (directory: RegistryLists): RegistryLists => {
    closers.push(() => directory.close());
    return directory;
  };
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-directory-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it('merges the registries, an earlier registry winning on the same address', async () => {
    const [a, b] = [fakeRegistry(), fakeRegistry()];
    const seen: number[][] = [];
    const directory = track(
      followRegistryLists({ key, registries: [a, b], onChange: (list) => seen.push(ports(list)) }),
    );
    a.push([record(2, { weight: 1 }), record(1)]);
    b.push([record(2, { weight: 2 }), record(3)]);
    await directory.ready;
    expect(ports(directory.providers)).toEqual([1, 2, 3]);
    expect(directory.providers.find((r) => r.port === 2)?.weight).toBe(1);
    expect(directory.source).toBe('registry');
    b.push([record(2, { weight: 2 }), record(3)]); // same merged list: no call
    expect(seen).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
  });

  it('holds a sudden empty list while connections are healthy, applies it on a second notification', async () => {
    const [a, b] = [fakeRegistry(), fakeRegistry()];
    const seen: number[][] = [];
    const directory = track(
      followRegistryLists({
        key,
        registries: [a, b],
        hasHealthyConnections: () => true,
        onChange: (list) => seen.push(ports(list)),
      }),
    );
    a.push([record(1)]);
    b.push([]);
    a.push([]);
    expect(ports(directory.providers)).toEqual([1]);
    b.push([]);
    expect(ports(directory.providers)).toEqual([]);
    expect(seen).toEqual([[1], []]);
  });

  it('applies a held empty list after the confirm delay once connections are no longer healthy', async () => {
    vi.useFakeTimers();
    const a = fakeRegistry();
    let healthy = true;
    const seen: number[][] = [];
    const directory = track(
      followRegistryLists({
        key,
        registries: [a],
        emptyConfirmDelayMs: 1_000,
        hasHealthyConnections: () => healthy,
        onChange: (list) => seen.push(ports(list)),
      }),
    );
    a.push([record(1), record(2)]);
    a.push([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ports(directory.providers)).toEqual([1, 2]); // still healthy: keep holding
    healthy = false;
    await vi.advanceTimersByTimeAsync(999);
    expect(ports(directory.providers)).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ports(directory.providers)).toEqual([]);
    expect(seen).toEqual([[1, 2], []]);
  });

  it('holds a sudden empty list without a word, and applies it at a recheck once nothing is healthy', async () => {
    vi.useFakeTimers();
    const a = fakeRegistry();
    let healthy = true;
    const lines: string[] = [];
    const directory = track(
      followRegistryLists({
        key,
        registries: [a],
        hasHealthyConnections: () => healthy,
        onChange() {},
        log: (level, message) => lines.push(`${level} ${message}`),
      }),
    );
    a.push([record(1)]);
    a.push([]); // e.g. a clean unregister, seen before the provider's "going away"
    directory.recheck();
    expect(ports(directory.providers)).toEqual([1]); // still healthy: held
    healthy = false; // the provider said goodbye
    directory.recheck();
    expect(directory.providers).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lines.filter((line) => !line.startsWith('info'))).toEqual([]);
  });

  it('warns once when a hold outlasts the confirm delay with healthy connections', async () => {
    vi.useFakeTimers();
    const a = fakeRegistry();
    const lines: string[] = [];
    const directory = track(
      followRegistryLists({
        key,
        registries: [a],
        emptyConfirmDelayMs: 1_000,
        hasHealthyConnections: () => true,
        onChange() {},
        log: (level, message) => lines.push(`${level} ${message}`),
      }),
    );
    a.push([record(1)]);
    a.push([]);
    await vi.advanceTimersByTimeAsync(999);
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^warn demo\.Users:1\.0\.0: registries report zero providers for 1000 ms while/);
    expect(ports(directory.providers)).toEqual([1]);
  });

  it('drops a held empty list when providers come back, and applies empties at once when unprotected', async () => {
    vi.useFakeTimers();
    const a = fakeRegistry();
    const held = track(
      followRegistryLists({ key, registries: [a], hasHealthyConnections: () => true, onChange() {} }),
    );
    a.push([record(1)]);
    a.push([]);
    a.push([record(3)]);
    expect(ports(held.providers)).toEqual([3]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ports(held.providers)).toEqual([3]);

    for (const options of [
      { emptyProtection: false, healthy: true },
      { emptyProtection: true, healthy: false },
    ]) {
      const b = fakeRegistry();
      const directory = track(
        followRegistryLists({
          key,
          registries: [b],
          emptyProtection: options.emptyProtection,
          hasHealthyConnections: () => options.healthy,
          onChange() {},
        }),
      );
      b.push([record(1)]);
      b.push([]);
      expect(directory.providers).toEqual([]);
    }
  });

  it('writes a snapshot after changes and uses it when no registry answers at start', async () => {
    const dir = tempDir();
    const snapshotPath = join(dir, 'snapshots', 'demo.Users:1.0.0.json');
    const a = fakeRegistry();
    const warm = track(followRegistryLists({ key, registries: [a], snapshotPath, onChange() {} }));
    a.push([record(1), record(2)]);
    await warm.close();
    const saved = JSON.parse(readFileSync(snapshotPath, 'utf8')) as { providers: ProviderRecord[] };
    expect(ports(saved.providers)).toEqual([1, 2]);

    const silent = fakeRegistry();
    const seen: number[][] = [];
    const cold = track(
      followRegistryLists({
        key,
        registries: [silent],
        snapshotPath,
        startTimeoutMs: 50,
        onChange: (list) => seen.push(ports(list)),
      }),
    );
    await cold.ready;
    expect(cold.source).toBe('snapshot');
    expect(ports(cold.providers)).toEqual([1, 2]);
    silent.push([record(2), record(5)]);
    expect(cold.source).toBe('registry');
    expect(seen).toEqual([
      [1, 2],
      [2, 5],
    ]);
  });

  it('is ready with nothing when no registry answers and there is no snapshot; closes subscriptions', async () => {
    const a = fakeRegistry();
    const directory = followRegistryLists({
      key,
      registries: [a],
      snapshotPath: join(tempDir(), 'missing.json'),
      startTimeoutMs: 20,
      onChange() {},
    });
    await directory.ready;
    expect(directory.source).toBe('none');
    expect(directory.providers).toEqual([]);
    a.push([record(1)]);
    await waitFor(() => directory.source === 'registry');
    await directory.close();
    expect(a.listeners).toBe(0);
  });

  it('does not block on a snapshot path that is not a regular file', async () => {
    const snapshotPath = join(tempDir(), 'fifo.json');
    execFileSync('mkfifo', [snapshotPath]);
    const lines: string[] = [];
    const directory = track(
      followRegistryLists({
        key,
        registries: [fakeRegistry()],
        snapshotPath,
        startTimeoutMs: 20,
        onChange() {},
        log: (_level, message) => lines.push(message),
      }),
    );
    await directory.ready;
    expect(directory.source).toBe('none');
    expect(
      lines.some((line) => line.includes(`no usable snapshot at ${snapshotPath}: not a regular file`)),
    ).toBe(true);
  });

  it('works with the file registry end to end', async () => {
    const dir = tempDir();
    const address = parseRegistryAddress(`file://${dir}/registry`);
    const provider = createFileRegistry(address, { ttlMs: 2_000 });
    const consumer = createFileRegistry(address, { ttlMs: 2_000 });
    closers.push(
      () => provider.close(),
      () => consumer.close(),
    );
    const snapshotPath = join(dir, 'snapshot.json');
    const directory = track(
      followRegistryLists({ key, registries: [consumer], snapshotPath, onChange() {} }),
    );
    await provider.register(record(7001));
    await waitFor(() => directory.providers.length === 1, 5_000);
    await waitFor(() => readFileSync(snapshotPath, 'utf8').includes('7001'), 5_000);
    await provider.unregister(record(7001));
    await waitFor(() => directory.providers.length === 0, 5_000);
  });
});

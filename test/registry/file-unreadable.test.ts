/**
 * The file registry and an entry its reader may not open (permission denied): the entry is skipped
 * with one log line naming the file, and the rest of the list keeps following changes. The consumer
 * runs in a child process as user `nobody` when the tests run as root (root reads any file).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/create-registry.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import { waitFor } from '../support/wait-for.js';
import { providerRecord, uniqueServiceKey } from './fixtures/records.js';

const TTL_MS = 4_000;
const NOBODY = 65_534;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Follower {
  lists: string[][];
  logs: string[];
}

function followInChild(address: string, key: object): Follower {
  const script = fileURLToPath(new URL('./fixtures/follow-process.ts', import.meta.url));
  const asNobody = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', script, address, String(TTL_MS), JSON.stringify(key)],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, HOME: tmpdir() }, ...asNobody },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const follower: Follower = { lists: [], logs: [] };
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    for (let at = pending.indexOf('\n'); at !== -1; at = pending.indexOf('\n')) {
      const line = JSON.parse(pending.slice(0, at)) as { list?: string[]; log?: string };
      pending = pending.slice(at + 1);
      if (line.list) follower.lists.push(line.list);
      if (line.log) follower.logs.push(line.log);
    }
  });
  return follower;
}

describe('file registry: an entry the consumer may not read', () => {
  it('is skipped with one log line naming the file; the list keeps following changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-file-eacces-'));
    chmodSync(dir, 0o755);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const address = `file://${dir}`;
    const key = uniqueServiceKey('eacces');
    const provider = await createRegistry(address, { ttlMs: TTL_MS });
    cleanups.push(() => provider.close());
    await provider.register(providerRecord(key, 31_001));
    const secret = join(dir, 'callisto', servicePathSegment(key), 'providers', '127.0.0.1:31002.json');
    writeFileSync(secret, JSON.stringify(providerRecord(key, 31_002)), { mode: 0o600 });
    if (process.getuid?.() !== 0) chmodSync(secret, 0o000);
    // kept fresh like a live provider's file, so it is not dropped as stale meanwhile
    const touch = setInterval(() => writeFileSync(secret, JSON.stringify(providerRecord(key, 31_002))), 500);
    cleanups.push(() => clearInterval(touch));

    const follower = followInChild(address, key);
    const latest = () => JSON.stringify(follower.lists.at(-1));
    await waitFor(() => latest() === JSON.stringify(['127.0.0.1:31001']), 20_000, {
      message: `the readable provider is listed; got ${JSON.stringify(follower.lists)}, logs ${follower.logs.join(' | ')}`,
    });
    await provider.register(providerRecord(key, 31_003));
    await waitFor(() => latest() === JSON.stringify(['127.0.0.1:31001', '127.0.0.1:31003']), 10_000);
    await provider.unregister(providerRecord(key, 31_001));
    await waitFor(() => latest() === JSON.stringify(['127.0.0.1:31003']), 10_000);

    const named = follower.logs.filter((line) => line.includes(secret));
    expect(named).toHaveLength(1);
    expect(named[0]).toMatch(
      new RegExp(`^warn registry file://${dir}: skipped provider entry ${secret}: cannot open: EACCES`),
    );
  });
});

/**
 * What following a file registry costs does not grow with polls and touches: every follower stats each
 * file about once per 2/3 TTL (when its expiry comes) and reads it again only when it was replaced or
 * resized, or at the latest after 2 TTLs. Before, every poll (every 200 ms here) stat'ed every file and
 * read every touched one, and every touch (an fs.watch event) read the whole directory again: with
 * thousands of registrations and dozens of consumers that saturated a machine (docs/scaling.md).
 *
 * Counted, not timed: node:fs/promises is wrapped for this file, and the reader's `stat` and `open`
 * calls on registry files are counted while 100 registrations (4 services x 25) are kept alive (touched
 * every TTL/3) for 3 TTLs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const counts = vi.hoisted(() => ({ stat: 0, open: 0, counting: false }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...original,
    stat: ((...args: Parameters<typeof original.stat>) => {
      if (counts.counting) counts.stat++;
      return original.stat(...args);
    }) as typeof original.stat,
    open: ((...args: Parameters<typeof original.open>) => {
      if (counts.counting) counts.open++;
      return original.open(...args);
    }) as typeof original.open,
  };
});

const { createRegistry } = await import('../../src/registry/create-registry.js');
const { providerRecord, uniqueServiceKey } = await import('./fixtures/records.js');

const TTL_MS = 1_000;
const SERVICES = 4;
const PER_SERVICE = 25;
const OBSERVE_MS = 3 * TTL_MS;
const dir = mkdtempSync(join(tmpdir(), 'callisto-file-cost-'));
const opened: Array<{ close(): Promise<void> }> = [];

afterAll(async () => {
  // closed first, also when the test failed: a live provider would write its files again
  await Promise.allSettled(opened.map((registry) => registry.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('file registry: the cost of following', () => {
  it('stats each file about once per 2/3 TTL and reads it only when replaced or after 2 TTLs', async () => {
    const address = `file://${dir}`;
    const keys = Array.from({ length: SERVICES }, () => uniqueServiceKey('cost'));
    const providers = await createRegistry(address, { ttlMs: TTL_MS });
    opened.push(providers);
    for (const key of keys) {
      for (let i = 0; i < PER_SERVICE; i++) await providers.register(providerRecord(key, 20_000 + i));
    }
    const follower = await createRegistry(address, { ttlMs: TTL_MS });
    opened.push(follower);
    const sizes = new Map<string, number>();
    for (const key of keys) await follower.subscribe(key, (list) => sizes.set(key.name, list.length));
    expect([...sizes.values()]).toEqual(Array(SERVICES).fill(PER_SERVICE));

    counts.counting = true;
    await new Promise((resolve) => setTimeout(resolve, OBSERVE_MS));
    counts.counting = false;
    const files = SERVICES * PER_SERVICE;
    const polls = (OBSERVE_MS / 200) * SERVICES;
    console.log(
      `[registry] file, ${files} registrations followed for ${OBSERVE_MS} ms (TTL ${TTL_MS} ms): ` +
        `${counts.stat} stat, ${counts.open} open (a stat per file per 2/3 TTL: ~${(files * OBSERVE_MS) / ((2 / 3) * TTL_MS)}; directory polls: ${polls})`,
    );
    // stats: a due check per file per ~2/3 TTL, plus one per directory per poll (generous bound)
    expect(counts.stat).toBeLessThanOrEqual(2 * ((files * OBSERVE_MS) / ((2 / 3) * TTL_MS)) + polls);
    // reads: a touched file at most once per 2 TTLs (plus one per file for rounding)
    expect(counts.open).toBeLessThanOrEqual(files * (OBSERVE_MS / (2 * TTL_MS) + 1));
    // and nothing was lost meanwhile
    expect([...sizes.values()]).toEqual(Array(SERVICES).fill(PER_SERVICE));
  }, 30_000);
});

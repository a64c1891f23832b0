/**
 * Chaos 2 — crash. Three provider processes (each call takes 20 ms, so calls are in flight all the
 * time) serve ~2,000 calls/s, half idempotent reads, half non-idempotent writes; one provider is
 * SIGKILLed. Reads fail over: none may fail. Writes in flight on the killed provider fail with a Network
 * error (they may or may not have executed), and nothing else fails; no write executes twice (every
 * provider appends each executed call id to its own file, checked across all of them). The consumer
 * must stop picking the dead provider within 1 s.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { ChaosDef } from './fixtures/chaos-service.js';
import { failureTap, pickSpy, routable } from './support/consumer.js';
import { startLoad, summary } from './support/load.js';
import { killProviders, startProvider } from './support/provider-process.js';

const TTL_MS = 3_000;
const RATE = 2_000;
const DELAY_MS = 20;
const dirs: string[] = [];

afterEach(async () => {
  await closeAll();
  await killProviders();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Executed call ids per provider log: `r <id>` / `w <id>` lines. */
function executions(file: string): { reads: number[]; writes: number[] } {
  const reads: number[] = [];
  const writes: number[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('w ')) writes.push(Number(line.slice(2)));
    else if (line.startsWith('r ')) reads.push(Number(line.slice(2)));
  }
  return { reads, writes };
}

describe('chaos: provider crash', () => {
  it('fails over idempotent calls, fails only in-flight writes of the dead provider, never runs a write twice', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callisto-chaos-crash-'));
    dirs.push(dir);
    const registry = `file://${path.join(dir, 'registry')}`;
    const names = ['p-a', 'p-b', 'p-c'];
    const logOf = (name: string) => path.join(dir, `${name}.log`);
    const providers = await Promise.all(
      names.map((name) =>
        startProvider({ name, registry, ttlMs: TTL_MS, delayMs: DELAY_MS, execLog: logOf(name) }),
      ),
    );
    const spy = pickSpy();
    const tap = failureTap();
    const consumer = await testApp({
      application: 'chaos-consumer',
      registry,
      registryTtlMs: TTL_MS,
      // Outlier detection off: what is measured is the pool's own handling of a lost connection (with
      // it on, the burst of Network failures also ejects the dead provider at once).
      consumer: { warmupMs: 0, snapshotDir: '', timeoutMs: 5_000, outlierDetection: false },
      extend: spy.extend,
      filters: { consumer: [tap.filter] },
    });
    const ref = consumer.refer(ChaosDef, { loadbalance: 'spy' });
    await ref.whoAmI();
    await waitFor(() => providers.every((p) => routable(consumer, p.address)), 10_000, {
      message: 'the consumer sees the three providers',
    });

    const load = startLoad({
      ratePerSecond: RATE,
      call: (id) => (id % 2 === 0 ? ref.read(id) : ref.write(id)),
      method: (id) => (id % 2 === 0 ? 'read' : 'write'),
    });
    const victim = providers[1]!;
    let killedAt = 0;
    let report: Awaited<ReturnType<typeof load.stop>>;
    try {
      await load.settle(RATE * 3);
      killedAt = Date.now();
      await victim.kill();
      // Run on past the registry TTL, so that a late pick (reconnect, registry) would be seen.
      await waitFor(
        () => !routable(consumer, victim.address) && Date.now() - killedAt > TTL_MS + 2_000,
        15_000,
        {
          intervalMs: 50,
          message: 'the dead provider leaves the consumer',
        },
      );
      await load.settle(RATE);
    } finally {
      report = await load.stop();
    }
    const lastPickMs = spy.lastPick(victim.address) - killedAt;
    const failedReads = report.failures.filter((f) => f.method === 'read');
    const failedWrites = report.failures.filter((f) => f.method === 'write');
    console.log(
      summary('crash', report, {
        failedReads: failedReads.length,
        failedWrites: failedWrites.length,
        lastPickOfDeadAfterKillMs: lastPickMs,
        codes: [...new Set(report.failures.map((f) => f.code))].join(','),
      }),
    );

    expect(failedReads).toEqual([]);
    expect(failedWrites.filter((f) => f.code !== 'Network')).toEqual([]);
    // Only calls that were in flight on the dead provider fail, and they fail as it dies.
    const tapped = new Map(tap.failed.map((f) => [f.id, f]));
    for (const failure of failedWrites) {
      expect(tapped.get(failure.id)?.address).toBe(victim.address);
    }
    const killedAtMs = killedAt - (Date.now() - report.durationMs);
    expect(failedWrites.filter((f) => f.atMs > killedAtMs + 1_000)).toEqual([]);
    expect(failedWrites.length).toBeLessThan(RATE); // a burst, not an outage

    // No write executed twice, anywhere; every answered write executed exactly once.
    const writes = names.flatMap((name) => executions(logOf(name)).writes);
    const counts = new Map<number, number>();
    for (const id of writes) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
    const failedIds = new Set(failedWrites.map((f) => f.id));
    const survivors = new Set(
      names.filter((n) => n !== victim.name).flatMap((name) => executions(logOf(name)).writes),
    );
    for (const id of failedIds) expect(survivors.has(id)).toBe(false);
    let answered = 0;
    for (let id = 1; id <= report.issued; id += 2) {
      if (!failedIds.has(id)) {
        answered++;
        if (counts.get(id) !== 1)
          expect.fail(`write ${id} answered but executed ${counts.get(id) ?? 0} times`);
      }
    }
    expect(answered).toBeGreaterThan(RATE);

    expect(lastPickMs).toBeLessThan(1_000);
  }, 90_000);
});

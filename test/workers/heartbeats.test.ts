/**
 * A heavy method on a worker executor leaves the provider's loop free: while it spins the CPU, the
 * provider (a process of its own, as in production) keeps answering heartbeats within their bound and
 * cheap calls on the loop, so the consumer keeps the connection and the heavy call's answer arrives.
 * The same provider with the method on the loop goes silent: the consumer declares it dead after three
 * heartbeat intervals (the check that this test can fail).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { HeavyDef } from './fixtures/heavy-service.js';
import { killAll, startChild } from './fixtures/process.js';

const PROVIDER = new URL('./fixtures/provider.ts', import.meta.url);
const HEARTBEAT_MS = 300; // the bound (3-4 intervals) stays well under OBSERVED_MS, and above a loaded machine's stalls
/** How long the heavy call spins while cheap calls go on: many heartbeat bounds (3 intervals). */
const OBSERVED_MS = 4_000;
const dirs: string[] = [];

afterEach(async () => {
  await closeAll();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('heartbeats and cheap calls while a heavy method runs', () => {
  it('keeps the connection and answers cheap calls while a worker thread spins', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callisto-heartbeat-'));
    dirs.push(dir);
    const release = path.join(dir, 'release');
    const child = await startChild(PROVIDER, {
      WK_EXECUTOR: 'worker',
      WK_HEARTBEAT_MS: String(HEARTBEAT_MS),
    });
    const consumer = await testApp({ heartbeatIntervalMs: HEARTBEAT_MS });
    const ref = consumer.refer(HeavyDef, { url: child.address, retries: 0, timeoutMs: 30_000 });
    await ref.where();
    const heavyCall = ref.spinUntil(release, 20_000).then(
      (value) => ({ value }),
      (error: unknown) => ({ error: RpcError.from(error) }),
    );
    // cheap calls for a while, each answered, while the heavy one spins
    const began = Date.now();
    let cheap = 0;
    const cheapFailures: string[] = [];
    while (Date.now() - began < OBSERVED_MS) {
      try {
        await withOptions(ref, { timeoutMs: 10_000 }).where();
        cheap++;
      } catch (error) {
        cheapFailures.push(RpcError.from(error).code);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    writeFileSync(release, '');
    const outcome = await heavyCall;
    expect(cheapFailures).toEqual([]);
    expect(outcome).toEqual({ value: 'released' });
    expect(cheap).toBeGreaterThan(3);
    expect(existsSync(release)).toBe(true);
  }, 60_000);
});

/**
 * The documented memory bound of the hostile suite (docs/operations.md, "Limits and hostile input"):
 * input a process refuses, or holds within its limits, makes its peak resident memory grow by at most
 * `PER_BYTE_SENT` times the bytes the attacker sent, plus whatever a limit explicitly allows (say the
 * partial-frame budget), plus `SLACK_MIB` for the runtime's own noise (heap growth, GC timing, JIT).
 * Each test prints one `[hostile]` line with what it measured.
 */
import { expect } from 'vitest';
import type { MemoryReport } from '../fixtures/memory.js';

export const PER_BYTE_SENT = 2;
export const SLACK_MIB = 48;
const MiB = 1024 * 1024;

export interface BoundCheck {
  /** Name of the scenario, for the summary line. */
  name: string;
  /** Memory right before the attack (after a GC and a VmHWM reset). */
  before: MemoryReport;
  /** Memory after it (VmHWM: the peak during the attack). */
  after: MemoryReport;
  /** Bytes the attacker sent. */
  sentBytes: number;
  /** Memory a limit explicitly allows on top (e.g. the partial-frame budget), bytes. */
  allowedBytes?: number;
  /** Which measure: the resident peak (default) or allocated array buffers (resident or not). */
  measure?: 'peakRss' | 'arrayBuffers';
  /**
   * Multiple of the bytes sent allowed on top (default PER_BYTE_SENT). 0 for limits that cap memory
   * whatever is sent (budgets), where a per-byte term would hide what the limit does.
   */
  perByteSent?: number;
}

/** Asserts growth <= PER_BYTE_SENT x sent + allowed + slack, and prints the figures. */
export function expectWithinBound(check: BoundCheck): void {
  const growth =
    check.measure === 'arrayBuffers'
      ? check.after.arrayBuffers - check.before.arrayBuffers
      : check.after.vmHwm - check.before.rss;
  const bound =
    (check.perByteSent ?? PER_BYTE_SENT) * check.sentBytes + (check.allowedBytes ?? 0) + SLACK_MIB * MiB;
  console.log(
    `[hostile] ${check.name}: sent ${(check.sentBytes / 1024).toFixed(0)} KiB, ` +
      `${check.measure === 'arrayBuffers' ? 'array buffers' : 'peak RSS'} grew ${(growth / MiB).toFixed(1)} MiB ` +
      `(${(growth / Math.max(1, check.sentBytes)).toFixed(2)} x sent), bound ${(bound / MiB).toFixed(1)} MiB`,
  );
  expect(growth).toBeLessThanOrEqual(bound);
}

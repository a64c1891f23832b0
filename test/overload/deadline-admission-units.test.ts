/**
 * Deadline-aware admission (filters/deadline.ts) beside the adaptive limit: it tells the limit's gate
 * of every call it refuses, and while the limit holds the queue (the gate says overloaded) it leaves
 * the refusing to the limit — its learnt service time is from the queue the limit has since cut — but
 * still refuses a call whose deadline has passed.
 */
import { describe, expect, it } from 'vitest';
import type { Invocation } from '../../src/core/invocation.js';
import { type DeadlineInvocation, providerDeadlineFilter } from '../../src/filters/deadline.js';
import { createServiceTime } from '../../src/governance/service-time.js';

/** A deadline filter whose method has learnt a 300 ms service time; wall clock at 1 000 000 ms. */
function filterWith(limitHolds: boolean) {
  const serviceTime = createServiceTime();
  for (let i = 0; i < 32; i++) serviceTime.record(300, 0);
  const shed: number[] = [];
  const filter = providerDeadlineFilter({
    serviceTime,
    now: () => 1_000_000,
    onShed: (at) => shed.push(at),
    limitHolds: () => limitHolds,
  });
  /** Runs the start hook for a call with `remainingMs` of budget; the error it threw, if any. */
  const start = (remainingMs: number): unknown => {
    const invocation = {
      deadline: 1_000_000 + remainingMs,
      oneway: false,
      admittedAt: 0,
      service: { name: 'test.Slow' },
      method: 'run',
    } as unknown as DeadlineInvocation & Invocation;
    try {
      filter.start!(invocation);
      return undefined;
    } catch (error) {
      return error;
    }
  };
  return { start, shed };
}

describe('deadline-aware admission and the adaptive limit', () => {
  it('refuses a call whose budget is below the service time, and tells the gate', () => {
    const { start, shed } = filterWith(false);
    expect(start(200)).toMatchObject({ code: 'Timeout', details: { shed: 'deadline' } });
    expect(shed).toHaveLength(1);
    expect(start(400)).toBeUndefined();
  });

  it('while the limit holds the queue, admits it (the limit decides), but not one whose deadline passed', () => {
    const { start, shed } = filterWith(true);
    expect(start(200)).toBeUndefined();
    expect(start(-1)).toMatchObject({ code: 'Timeout' });
    expect(shed).toHaveLength(0);
  });
});

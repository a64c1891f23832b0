/**
 * Deadline-aware admission (filters/deadline.ts) beside the adaptive limit: it tells the limit's gate
 * of every call it refuses, and while the limit holds the queue (the gate says overloaded) it leaves
 * the refusing to the limit — its learnt service time is from the queue the limit has since cut — but
 * still refuses a call whose deadline has passed.
 */
import { describe, expect, it } from 'vitest';
import type { Invocation } from '../../src/core/invocation.js';
import {
  type DeadlineInvocation,
  type DeadlineLimitView,
  providerDeadlineFilter,
} from '../../src/filters/deadline.js';
import { createServiceTime } from '../../src/governance/service-time.js';

/**
 * A deadline filter whose method has learnt a 300 ms service time (while the event loop was busy when
 * `learntBusy`); wall clock at 1 000 000 ms; `busy` says whether the loop is busy now.
 */
function filterWith(
  limitHolds: boolean,
  learnt = { learntBusy: false, busy: () => false },
  queueWaitMs = () => 0,
  learntMs = 300,
) {
  const serviceTime = createServiceTime();
  for (let i = 0; i < 32; i++) serviceTime.record(learntMs, 0, learnt.learntBusy);
  const shed: number[] = [];
  // the adaptive limit as deadline-aware admission sees it: busy is a utilisation of 1 or 0
  const limit: DeadlineLimitView = {
    shedByDeadline: (at) => shed.push(at),
    overloaded: limitHolds,
    queueWaitMs,
    get utilisation() {
      return learnt.busy() ? 1 : 0;
    },
  };
  const filter = providerDeadlineFilter({ serviceTime, now: () => 1_000_000, limit });
  const running: Array<DeadlineInvocation & Invocation> = [];
  /** Ends the calls started so far (their end hooks). */
  const endAll = () => {
    for (const invocation of running.splice(0)) filter.end!(invocation, new Error('ended'));
  };
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
      running.push(invocation);
      return undefined;
    } catch (error) {
      return error;
    }
  };
  return { start, shed, endAll };
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

  it('an estimate learnt on a busy loop no longer refuses once nothing of the method runs and the loop is idle', () => {
    let loopBusy = false;
    const { start, shed, endAll } = filterWith(false, { learntBusy: true, busy: () => loopBusy });
    // nothing running, the loop idle: the queue the estimate holds is gone, the call is its sample
    expect(start(200)).toBeUndefined();
    // with that call running, the estimate applies again
    expect(start(200)).toMatchObject({ code: 'Timeout', details: { shed: 'deadline' } });
    endAll();
    // nothing running, but the loop still busy: the queue may be there
    loopBusy = true;
    expect(start(200)).toMatchObject({ code: 'Timeout' });
    expect(shed).toHaveLength(2);
  });

  it('an estimate learnt on an idle loop (the method waits on something) refuses with nothing running', () => {
    const { start } = filterWith(false, { learntBusy: false, busy: () => false });
    expect(start(200)).toMatchObject({ code: 'Timeout', details: { shed: 'deadline' } });
  });

  it('before the gate opens, refuses a call the calls ahead of it would hold for more than half its budget, and tells the gate', () => {
    // the method itself is fast (1 ms learnt): only the queue ahead can refuse
    let waitMs = 0;
    const { start, shed } = filterWith(false, undefined, () => waitMs, 1);
    expect(start(200)).toBeUndefined();
    waitMs = 99;
    expect(start(200)).toBeUndefined();
    waitMs = 101;
    const refused = start(200);
    expect(refused).toMatchObject({
      code: 'Timeout',
      details: { shed: 'deadline', remainingMs: 200, queueWaitMs: 101 },
    });
    expect((refused as Error).message).toContain('the calls ahead of it would take about 101 ms');
    expect(shed).toHaveLength(1);
    // a longer budget has room for the same queue
    expect(start(300)).toBeUndefined();
  });

  it('once the gate is open the limit does the refusing, not the queue ahead', () => {
    const { start, shed } = filterWith(true, undefined, () => 1_000, 1);
    expect(start(200)).toBeUndefined();
    expect(shed).toHaveLength(0);
  });
});

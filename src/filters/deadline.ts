/**
 * `deadline` (provider): a call whose caller's deadline has already passed when it is read is refused
 * with `Timeout`, without running anything (the caller has given up on it). The deadline is the
 * provider's own: the time the request's bytes were read plus the budget the request carries.
 *
 * With a method's learnt service time (`serviceTime`, governance/service-time.ts; `server.
 * deadlineAdmission`, on by default) it is also deadline-aware admission: a call whose remaining budget
 * is already smaller than the method's expected service time is refused at once with `Timeout`
 * (`details.shed: 'deadline'`: the caller's budget is what is short), before its arguments are counted or decoded and before it takes an
 * execution slot: it never runs, so the consumer may send it to another provider (while it refuses
 * every call, one in 100 ms goes anyway, a probe that keeps the estimate learning). Every call the
 * method answered itself (a result, or anything its handler threw that is not an RpcError) teaches the
 * estimate how long it took from here to the end of the chain (queues after this filter included).
 *
 * With the adaptive limit, until its gate says overloaded, a call is also refused when the calls ahead
 * of it would hold it for more than half its remaining budget (`queueWaitMs`: the calls in flight × the
 * event loop's busy time per call, known before any overload from the calls that ended while the loop
 * was working). This bounds a step into overload before the gate has confirmed it: a loaded loop reads
 * a whole socket's worth of requests in one poll and would start all of them, each poll's batch several
 * times the last, and finish the last ones long after their callers gave up. At 4× the capacity with
 * 200 ms deadlines (bench/overload.ts O1) the first 750 ms answered almost nothing in time; goodput went
 * from 86–87 % to 92 % of the capacity (four runs). Once the gate is open the limit holds the queue,
 * and this check steps aside: the refusals are the limit's (`Overloaded`).
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { shedError } from '../core/shed.js';
import type { ConcurrencyLimiter } from '../governance/concurrency-limiter.js';
import type { ServiceTime } from '../governance/service-time.js';

/** What deadline-aware admission keeps on a provider's invocation. */
export interface DeadlineInvocation extends Invocation {
  /** performance.now() when the `deadline` filter admitted the call (0: not measured). */
  admittedAt: number;
  readonly oneway: boolean;
}

export interface ProviderDeadlineOptions {
  /** The method's learnt service time; none: deadline-aware admission off. */
  readonly serviceTime?: ServiceTime | undefined;
  /** Wall clock, ms. Default Date.now. */
  readonly now?: () => number;
  /**
   * The provider's adaptive concurrency limit, when it is on: told of every call deadline-aware
   * admission refuses (its gate's evidence); while it says overloaded it is the one that refuses (the
   * service time learnt while the queue grew is stale, the limit keeps the queue short, and refusing
   * by it would turn away calls the provider can serve in time until enough probes replaced it: every
   * admitted call is a fresh sample); and its gate's utilisation says whether the event loop is busy
   * (at least {@link BUSY_UTILISATION}: a call's time may then hold a queue for the CPU).
   */
  readonly limit?: DeadlineLimitView | undefined;
}

/** What deadline-aware admission reads of the adaptive limit (governance/concurrency-limiter.ts). */
export type DeadlineLimitView = Pick<
  ConcurrencyLimiter,
  'shedByDeadline' | 'overloaded' | 'utilisation' | 'queueWaitMs'
>;

/**
 * Until the adaptive limit's gate says overloaded, a call is refused when the calls ahead of it would
 * hold it for more than this share of its remaining budget.
 */
export const QUEUE_WAIT_SHARE = 0.5;

/** The event loop's utilisation from which a call's measured time counts as holding a CPU queue. */
export const BUSY_UTILISATION = 0.5;

export function providerDeadlineFilter(
  options: ProviderDeadlineOptions = {},
): NamedFilter<DeadlineInvocation> {
  const now = options.now ?? Date.now;
  const serviceTime = options.serviceTime;
  const limit = options.limit;
  if (serviceTime === undefined) {
    return defineFilter<DeadlineInvocation>({
      name: 'deadline',
      position: 'provider',
      order: FILTER_ORDER.provider.deadline,
      start(invocation) {
        if (invocation.deadline > 0 && now() >= invocation.deadline) throw deadlinePassed(invocation);
      },
    });
  }
  // Calls of this method admitted and not ended. An estimate learnt while the event loop was busy may
  // hold the time its calls queued for the CPU; once nothing of the method runs and the loop is no
  // longer busy, that queue is gone, and a call is admitted whatever the estimate says: it is the
  // sample that tells how long the method takes now. (Refusing by it left a provider at 4x its
  // capacity idle for a second at a time, the estimate refreshed by one probe per 100 ms.) An estimate
  // learnt on an idle loop is the method's own time (a database, a timer): it keeps refusing.
  let running = 0;
  const busy = (): boolean => limit !== undefined && limit.utilisation >= BUSY_UTILISATION;
  return defineFilter<DeadlineInvocation>({
    name: 'deadline',
    position: 'provider',
    order: FILTER_ORDER.provider.deadline,
    start(invocation) {
      const at = tickMonotonic();
      if (invocation.deadline > 0) {
        const remainingMs = invocation.deadline - now();
        if (remainingMs <= 0) throw deadlinePassed(invocation);
        if (limit !== undefined && !invocation.oneway && !limit.overloaded) {
          const waitMs = limit.queueWaitMs();
          if (waitMs > remainingMs * QUEUE_WAIT_SHARE) {
            limit.shedByDeadline(at);
            throw shedError(
              'Timeout',
              `${invocation.service.name}.${invocation.method}: ${Math.round(remainingMs)} ms left of the caller's budget, and the calls ahead of it would take about ${Math.round(waitMs)} ms (deadline-aware admission); not run`,
              'deadline',
              { details: { remainingMs, queueWaitMs: waitMs } },
            );
          }
        }
        const queueGone = running === 0 && serviceTime.learntBusy() && !busy();
        if (
          !queueGone &&
          !invocation.oneway &&
          !serviceTime.admits(remainingMs, at) &&
          limit?.overloaded !== true
        ) {
          const expectedMs = serviceTime.expectedMs(at);
          limit?.shedByDeadline(at);
          // Timeout: the caller's budget is what ran out (a caller with no time left to fail over gets
          // the error it would have got anyway); details.shed says it never ran, so it may go elsewhere
          throw shedError(
            'Timeout',
            `${invocation.service.name}.${invocation.method}: ${Math.round(remainingMs)} ms left of the caller's budget, less than the ${Math.round(expectedMs)} ms the method takes (deadline-aware admission); not run`,
            'deadline',
            { details: { remainingMs, expectedMs } },
          );
        }
      }
      invocation.admittedAt = at;
      running++;
    },
    end(invocation, error) {
      running--;
      if (error !== undefined && RpcError.is(error)) return;
      const startedAt = invocation.admittedAt;
      let at = tickMonotonic();
      // a call that ended in the run it started in (a synchronous method) reads the clock itself
      if (at === startedAt) at = performance.now();
      serviceTime.record(at - startedAt, at, busy());
    },
  });
}

function deadlinePassed(invocation: Invocation): RpcError {
  return new RpcError(
    'Timeout',
    `${invocation.service.name}.${invocation.method}: deadline passed before execution`,
  );
}

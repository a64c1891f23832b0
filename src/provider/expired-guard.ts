/**
 * The last check before a method runs: a call whose caller's deadline passed while it waited in the
 * provider (behind a filter that answered later — a JWT check, a leaky bucket, a user's filter that
 * queues —, or in a loaded event loop between its filters) is dropped, never executed for nobody, and
 * answered `Timeout` (`details.shed: 'expired'`; the caller has given up, so it is one small frame that
 * its connection drops, and in-process and HTTP callers get an answer). A call that did not wait costs
 * one comparison: the clock is the run's shared reading (core/clock.ts), the one the `deadline` filter
 * checked against in the same run.
 *
 * For a metered call it also notes when the method starts (`runAt`, one clock reading): the
 * `metrics-server` filter counts the time from the call's arrival to then as its queue time.
 */
import { tickNow } from '../core/clock.js';
import type { Step } from '../core/filter.js';
import { shedError } from '../core/shed.js';
import type { ServerInvocation } from './server-invocation.js';

export function unlessExpired(run: Step<ServerInvocation>): Step<ServerInvocation> {
  return (invocation) => {
    if (invocation.deadline > 0 && tickNow() >= invocation.deadline) {
      throw shedError(
        'Timeout',
        `${invocation.label}: the caller's deadline passed while the call waited in the provider; not run`,
        'expired',
      );
    }
    if (invocation.meteredAt !== 0) invocation.runAt = performance.now();
    return run(invocation);
  };
}

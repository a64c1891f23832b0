/**
 * Log lines about hostile or broken peers, or about an overload, rate-limited per kind of event: a peer
 * sending a million bad frames, or a million calls refused their retry, must not turn into a million log
 * lines. The first event of a kind is logged at once; after
 * that at most one line per `intervalMs` per kind, saying how many were not logged in between. Each line
 * names the peer of the event it reports.
 */
import type { LogFields } from './logger.js';

export interface RateLimitedLog {
  /**
   * Logs `message` (about `kind` of event), with the `fields` of that event, unless a line of that kind
   * was logged less than `intervalMs` ago.
   */
  warn(kind: string, message: string, fields?: LogFields): void;
}

export function createRateLimitedLog(
  write: (message: string, fields?: LogFields) => void,
  intervalMs = 10_000,
  now: () => number = Date.now,
): RateLimitedLog {
  const kinds = new Map<string, { last: number; suppressed: number }>();
  return {
    warn(kind, message, fields) {
      const at = now();
      const state = kinds.get(kind);
      if (state !== undefined && at - state.last < intervalMs) {
        state.suppressed++;
        return;
      }
      const suppressed = state?.suppressed ?? 0;
      write(suppressed > 0 ? `${message} (${suppressed} more like it not logged)` : message, fields);
      if (state === undefined) kinds.set(kind, { last: at, suppressed: 0 });
      else {
        state.last = at;
        state.suppressed = 0;
      }
    },
  };
}

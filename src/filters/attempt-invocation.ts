/** What the consumer's per-attempt filters read and write of an invocation (consumer/client-invocation.ts). */
import type { AdaptiveThrottle } from '../cluster/adaptive-throttle.js';
import type { Attachments, Invocation } from '../core/invocation.js';
import type { EndpointStatsRecorder } from '../loadbalance/endpoint-stats.js';

/** The current attempt, one record reset when an attempt starts (consumer/call-attempt.ts). */
export interface AttemptState {
  /** The provider the balancer picked for this attempt. */
  readonly endpoint:
    | {
        readonly address: string;
        readonly stats: EndpointStatsRecorder;
        /** Its adaptive throttling state (the `throttle` filter). */
        readonly throttle: AdaptiveThrottle;
      }
    | undefined;
  /** The attempt's budget, ms until the call's deadline or the attempt's own cap (0 for none). */
  timeoutMs: number;
  /** The request reached the wire (the provider may have seen it). */
  readonly sent: boolean;
  /** performance.now() when the attempt started. */
  readonly startedAt: number;
  /** performance.now() when diagnostics started measuring, 0 when nobody listens. */
  observedAt: number;
  /** The attachments of the provider's answer (none until it answered). */
  readonly responseAttachments: Attachments;
  /** The provider's load report that came with the answer (`callisto-load`), not among `responseAttachments`. */
  readonly loadReport: string | undefined;
}

export interface AttemptInvocation extends Invocation {
  /** Whether the method may run twice (an attempt that timed out may be tried elsewhere). */
  readonly idempotent: boolean;
  /** The current attempt. */
  readonly attempt: AttemptState;
  /** Attempts of this call so far (the `metrics-client` filter counts them). */
  attempts: number;
  /** The provider of the attempt before, for telling a failover from a retry. */
  lastAttemptAddress: string | undefined;
}

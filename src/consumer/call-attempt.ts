/**
 * The state of one attempt of a call, one record per invocation, reset (in place, no allocation) when
 * an attempt starts: which provider, its budget, whether the request reached the wire, when it started,
 * the answer's attachments, and whom its end is told (its hook filters, the strategy's listener, and
 * the wrapping filters' wait for the wire). Everything that lives across attempts (the deadline, the
 * attempt count, the call's span) stays on the invocation (client-invocation.ts).
 */
import type { AttemptListener } from '../cluster/cluster.js';
import type { Hook } from '../core/filter.js';
import type { Attachments, Invocation } from '../core/invocation.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { ProviderEndpoint } from './endpoint.js';
import type { WireAttempt } from './pending-call.js';

export class CallAttempt<I extends Invocation = Invocation> implements WireAttempt {
  /** The provider of this attempt (undefined before the first). */
  endpoint: ProviderEndpoint | undefined = undefined;
  /** Its address (`host:port`, `injvm`); stays after the attempt ended. */
  remoteAddress: string | undefined = undefined;
  /** The budget of this attempt, ms until the deadline or the attempt's cap (0 for none); set by `deadline`. */
  timeoutMs = 0;
  /** Set by the connection once the request is queued for the wire: the provider may see it. */
  sent = false;
  /** performance.now() when the attempt started (the `endpoint-stats` filter's latency). */
  startedAt = 0;
  /** performance.now() when the `observe` filter started measuring; 0 when nobody listens. */
  observedAt = 0;
  /** The attachments of the provider's answer (none until it answered). */
  responseAttachments: Attachments = NO_ATTACHMENTS;
  /** @internal The provider's load report that came with the answer, for `endpoint-stats`. */
  loadReport: string | undefined = undefined;
  /** @internal The attempt's hook filters, ended when it ends. */
  hooks: readonly Hook<I>[] = [];
  /** @internal Told how the attempt ended (the cluster strategy). */
  listener: AttemptListener | undefined = undefined;
  /** @internal Set while the attempt's wrapping filters wait for the wire's answer. */
  wire: AttemptListener | undefined = undefined;

  /** Starts a new attempt on `endpoint`: everything of the attempt before is forgotten. */
  reset(
    endpoint: ProviderEndpoint,
    hooks: readonly Hook<I>[],
    listener: AttemptListener,
    startedAt: number,
  ): void {
    this.endpoint = endpoint;
    this.remoteAddress = endpoint.address;
    this.timeoutMs = 0;
    this.sent = false;
    this.startedAt = startedAt;
    this.observedAt = 0;
    this.responseAttachments = NO_ATTACHMENTS;
    this.loadReport = undefined;
    this.hooks = hooks;
    this.listener = listener;
    this.wire = undefined;
  }
}

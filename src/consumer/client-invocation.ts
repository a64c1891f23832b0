/**
 * A call as the consumer makes it: one object from the proxy down to the connection, reused by every
 * attempt of the call (forking and broadcast fork one per provider). It is what the per-call filters
 * see, what the cluster strategy repeats, what the per-attempt filters see, and what the connection
 * sends and reports back into (`answered`, `failed`): the end of an attempt runs the attempt's hook
 * filters and tells the strategy, with no promise in between.
 */
import type { AttemptListener, ClusterInvocation } from '../cluster/cluster.js';
import { tickNow } from '../core/clock.js';
import { endHooks, type Hook } from '../core/filter.js';
import type { Attachments } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { ProviderEndpoint } from './endpoint.js';
import type { MethodRoute } from './method-route.js';
import type { OutboundCall } from './pending-call.js';

const NO_HOOKS: readonly Hook<ClientInvocation>[] = [];

export class ClientInvocation implements ClusterInvocation, OutboundCall {
  readonly service: ServiceKey;
  readonly method: string;
  readonly startedAt: number;
  /** Absolute deadline (Date.now clock), 0 for none. */
  deadline: number;
  remoteAddress: string | undefined = undefined;
  /** The attachments of the provider's answer to the last attempt (none until it answered). */
  responseAttachments: Attachments = NO_ATTACHMENTS;
  /** The provider of the current attempt. */
  endpoint: ProviderEndpoint | undefined = undefined;
  /** The budget of the current attempt, ms until the deadline (0 for none); set by the `deadline` filter. */
  attemptTimeoutMs = 0;
  /** Set by the connection once the current attempt's request is queued for the wire. */
  sent = false;
  /** performance.now() when the current attempt started (the `endpoint-stats` filter's latency). */
  attemptStartedAt = 0;
  /** performance.now() when the `observe` filter started measuring the attempt; 0 when nobody listens. */
  observedAt = 0;
  /** When the `metrics-call` filter started measuring the call. */
  meteredAt = 0;
  /** Attempts so far (the `metrics-client` filter counts them, and tells retries and failovers). */
  attempts = 0;
  /** The provider of the attempt before. */
  lastAttemptAddress: string | undefined = undefined;
  /** The call's span, while the `tracing-client` filter traces it. */
  tracingSpan: unknown = undefined;
  #hooks: readonly Hook<ClientInvocation>[] = NO_HOOKS;
  #listener: AttemptListener | undefined = undefined;
  /** Set while the attempt's wrapping filters wait for the connection's answer. */
  #wire: AttemptListener | undefined = undefined;

  /** Set by `withOptions(ref, { cache: false })`: the call goes past the result cache. */
  declare noCache: boolean | undefined;

  /** @internal */
  constructor(
    /** @internal The method's route (its service, name and serializer). */
    readonly route: MethodRoute,
    readonly args: unknown[],
    public attachments: Attachments,
    /** The call's whole time budget, ms (0 for none). */
    readonly timeoutMs: number,
    readonly signal: AbortSignal | undefined,
    readonly oneway: boolean,
    readonly idempotent: boolean,
    now: number = tickNow(),
  ) {
    this.service = route.service;
    this.method = route.method;
    this.startedAt = now;
    this.deadline = timeoutMs > 0 ? now + timeoutMs : 0;
  }

  /** The same call with a fresh deadline and no signal, for background retries. */
  renew(): ClientInvocation {
    return new ClientInvocation(
      this.route,
      this.args,
      { ...this.attachments },
      this.timeoutMs,
      undefined,
      this.oneway,
      this.idempotent,
    );
  }

  /** The same call, deadline included, with its own signal (forking, broadcast). */
  fork(signal: AbortSignal | undefined): ClientInvocation {
    const copy = new ClientInvocation(
      this.route,
      this.args,
      { ...this.attachments },
      this.timeoutMs,
      signal,
      this.oneway,
      this.idempotent,
      this.startedAt,
    );
    copy.deadline = this.deadline;
    return copy;
  }

  /** @internal Starts an attempt on `endpoint`: `hooks` end and `listener` hears when it ended. */
  beginAttempt(
    endpoint: ProviderEndpoint,
    hooks: readonly Hook<ClientInvocation>[],
    listener: AttemptListener,
  ): void {
    this.endpoint = endpoint;
    this.remoteAddress = endpoint.address;
    this.responseAttachments = NO_ATTACHMENTS;
    this.sent = false;
    this.#hooks = hooks;
    this.#listener = listener;
  }

  /** @internal The attempt's wrapping filters wait for the wire: the answer goes to `wire` first. */
  awaitWire(wire: AttemptListener): void {
    this.#wire = wire;
  }

  answered(value: unknown): void {
    const wire = this.#wire;
    if (wire !== undefined) {
      this.#wire = undefined;
      wire.onAnswer(value);
    } else this.endAttempt(undefined, value);
  }

  failed(error: RpcError): void {
    const wire = this.#wire;
    if (wire !== undefined) {
      this.#wire = undefined;
      wire.onFailure(error);
    } else this.endAttempt(error, undefined);
  }

  /** @internal The attempt ended: its hook filters end (last first), then its listener is told. */
  endAttempt(error: RpcError | undefined, value: unknown): void {
    const listener = this.#listener;
    if (listener === undefined) return;
    endHooks(this.#hooks, this, error);
    this.#listener = undefined;
    this.#hooks = NO_HOOKS;
    if (error === undefined) listener.onAnswer(value);
    else listener.onFailure(error);
  }

  /** @internal The attempt was refused by a start hook (whose ends already ran): tell the listener. */
  refuseAttempt(error: RpcError): void {
    const listener = this.#listener;
    this.#listener = undefined;
    this.#hooks = NO_HOOKS;
    listener?.onFailure(error);
  }
}

/**
 * A call as the consumer makes it: one object from the proxy down to the connection, reused by every
 * attempt of the call (forking and broadcast fork one per provider). It is what the per-call filters
 * see, what the cluster strategy repeats, what the per-attempt filters see, and what the connection
 * sends and reports back into (`answered`, `failed`): the end of an attempt runs the attempt's hook
 * filters and tells the strategy, with no promise in between.
 *
 * What belongs to one attempt is one record, `attempt` (call-attempt.ts), reset when an attempt starts;
 * the fields here live as long as the call.
 */
import type { AttemptListener, ClusterInvocation } from '../cluster/cluster.js';
import { tickNow } from '../core/clock.js';
import { endHooks, type Hook } from '../core/filter.js';
import type { Attachments } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import { newCallId } from '../observability/call-id.js';
import { CallAttempt } from './call-attempt.js';
import type { ClientStream } from './client-stream.js';
import type { ProviderEndpoint } from './endpoint.js';
import type { MethodRoute } from './method-route.js';
import type { OutboundCall } from './pending-call.js';

const NO_HOOKS: readonly Hook<ClientInvocation>[] = [];

/** What a call is made of (the proxy gives it, `renew` and `fork` copy it). */
export interface ClientInvocationInit {
  /** The method's route (its service, name and serializer). */
  readonly route: MethodRoute;
  readonly args: unknown[];
  readonly attachments: Attachments;
  /** The call's whole time budget, ms (0 for none). */
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  /** When the call started (Date.now clock; default: now). */
  readonly startedAt?: number | undefined;
  /** Set by `withOptions(ref, { cache: false })`: the call goes past the result cache. */
  readonly noCache?: boolean | undefined;
  /** The call's id (default: a new one); `renew` and `fork` keep it. */
  readonly callId?: string | undefined;
  /** The stream this call opens (a method declared `stream`). */
  readonly stream?: ClientStream | undefined;
  /** Made while serving a retry (its `callisto-retry` inherited, consumer/hop-context.ts): one attempt only. */
  readonly underRetry?: boolean | undefined;
}

export class ClientInvocation implements ClusterInvocation, OutboundCall {
  /** @internal The method's route (its service, name and serializer). */
  readonly route: MethodRoute;
  readonly service: ServiceKey;
  readonly method: string;
  readonly args: unknown[];
  attachments: Attachments;
  /** The call's whole time budget, ms (0 for none). */
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  readonly startedAt: number;
  /** Absolute deadline (Date.now clock), 0 for none. */
  deadline: number;
  /** The current (or last) attempt: one record, reset when an attempt starts. */
  readonly attempt: CallAttempt<ClientInvocation> = new CallAttempt<ClientInvocation>();
  /** Attempts so far (the `metrics-client` filter counts them, and tells retries and failovers). */
  attempts = 0;
  /** The provider of the attempt before. */
  lastAttemptAddress: string | undefined = undefined;
  /** The time the call's failed attempts took, ms (what the `adaptive` retry policy reads). */
  failedAttemptsMs = 0;
  /** When the `metrics-call` filter started measuring the call. */
  meteredAt = 0;
  /** The call's span, while the `tracing-client` filter traces it. */
  tracingSpan: unknown = undefined;
  /** Set by `withOptions(ref, { cache: false })`: the call goes past the result cache. */
  readonly noCache: boolean | undefined;
  /** The call's id, sent to the provider and written in log lines about the call (every attempt's). */
  readonly callId: string;
  /** The stream this call opens; undefined for a unary call. */
  readonly stream: ClientStream | undefined;
  /**
   * Made while a provider method serves a retry (the `callisto-retry` marker, inherited): the cluster
   * makes one attempt only, unless the request never left this process (cluster/retry-layer.ts).
   */
  readonly underRetry: boolean;
  /** @internal The per-call filters' end hooks while a strategy may claim them (consumer/call-chain.ts). */
  settleHooks: readonly Hook<ClusterInvocation>[] | undefined = undefined;

  /** @internal */
  constructor(init: ClientInvocationInit) {
    const now = init.startedAt ?? tickNow();
    this.route = init.route;
    this.service = init.route.service;
    this.method = init.route.method;
    this.args = init.args;
    this.attachments = init.attachments;
    this.timeoutMs = init.timeoutMs;
    this.signal = init.signal;
    this.oneway = init.oneway;
    this.idempotent = init.idempotent;
    this.startedAt = now;
    this.deadline = init.timeoutMs > 0 ? now + init.timeoutMs : 0;
    this.noCache = init.noCache;
    this.callId = init.callId ?? newCallId();
    this.stream = init.stream;
    this.underRetry = init.underRetry === true;
  }

  /** The provider of the current attempt (`attempt.remoteAddress`). */
  get remoteAddress(): string | undefined {
    return this.attempt.remoteAddress;
  }

  set remoteAddress(address: string | undefined) {
    this.attempt.remoteAddress = address;
  }

  /** The attachments of the provider's answer to the last attempt (none until it answered). */
  get responseAttachments(): Attachments {
    return this.attempt.responseAttachments;
  }

  set responseAttachments(attachments: Attachments) {
    this.attempt.responseAttachments = attachments;
  }

  /** The same call with a fresh deadline and no signal, for background retries. */
  renew(): ClientInvocation {
    return new ClientInvocation({ ...this.#init(), signal: undefined });
  }

  /** The same call, deadline included, with its own signal (forking, broadcast, hedging). */
  fork(signal: AbortSignal | undefined): ClientInvocation {
    const copy = new ClientInvocation({ ...this.#init(), signal, startedAt: this.startedAt });
    copy.deadline = this.deadline;
    return copy;
  }

  #init(): ClientInvocationInit {
    return {
      route: this.route,
      args: this.args,
      attachments: { ...this.attachments },
      timeoutMs: this.timeoutMs,
      signal: this.signal,
      oneway: this.oneway,
      idempotent: this.idempotent,
      callId: this.callId,
      stream: this.stream,
      underRetry: this.underRetry,
    };
  }

  /** @internal Starts an attempt on `endpoint`: `hooks` end and `listener` hears when it ended. */
  beginAttempt(
    endpoint: ProviderEndpoint,
    hooks: readonly Hook<ClientInvocation>[],
    listener: AttemptListener,
    startedAt: number,
  ): void {
    this.attempt.reset(endpoint, hooks, listener, startedAt);
  }

  /** @internal The attempt's wrapping filters wait for the wire: the answer goes to `wire` first. */
  awaitWire(wire: AttemptListener): void {
    this.attempt.wire = wire;
  }

  answered(value: unknown): void {
    const attempt = this.attempt;
    const wire = attempt.wire;
    if (wire !== undefined) {
      attempt.wire = undefined;
      wire.onAnswer(value);
    } else this.endAttempt(undefined, value);
  }

  failed(error: RpcError): void {
    const attempt = this.attempt;
    const wire = attempt.wire;
    if (wire !== undefined) {
      attempt.wire = undefined;
      wire.onFailure(error);
    } else this.endAttempt(error, undefined);
  }

  /** @internal The attempt ended: its hook filters end (last first), then its listener is told. */
  endAttempt(error: RpcError | undefined, value: unknown): void {
    const attempt = this.attempt;
    const listener = attempt.listener;
    if (listener === undefined) return;
    endHooks(attempt.hooks, this, error);
    attempt.listener = undefined;
    attempt.hooks = NO_HOOKS;
    if (error === undefined) listener.onAnswer(value);
    else listener.onFailure(error);
  }

  /** @internal The attempt was refused by a start hook (whose ends already ran): tell the listener. */
  refuseAttempt(error: RpcError): void {
    const attempt = this.attempt;
    const listener = attempt.listener;
    attempt.listener = undefined;
    attempt.hooks = NO_HOOKS;
    listener?.onFailure(error);
  }
}

/**
 * Every diagnostics channel Callisto publishes on, in one place (as undici does). Metrics, logs and the
 * admin view subscribe with `diagnostics_channel.subscribe(name, fn)`; publishers check
 * `hasSubscribers` first, so nothing is paid when nobody listens.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ErrorCodeName, RpcError } from '../core/rpc-error.js';

export const CHANNEL_NAMES = {
  /** A consumer's attempt to one provider ended: {@link ClientCallMessage}. */
  clientCall: 'callisto:client:call',
  /** A provider finished executing a call: {@link ServerCallMessage}. */
  serverCall: 'callisto:server:call',
  /** A consumer's connection changed: {@link ConnectionMessage}. */
  connection: 'callisto:client:connection',
  /** A connection was closed for breaking the protocol: {@link ProtocolErrorMessage}. */
  protocolError: 'callisto:server:protocol-error',
  /** A consumer's call failed with its retries used up: {@link RetriesExhaustedMessage}. */
  retriesExhausted: 'callisto:client:retries-exhausted',
} as const;

export interface ClientCallMessage {
  service: string;
  method: string;
  /** `host:port` of the provider, or `injvm`. */
  address: string;
  durationMs: number;
  /** The error code when the attempt failed. */
  error: ErrorCodeName | undefined;
}

export interface ServerCallMessage {
  service: string;
  method: string;
  /** The caller's `host:port`. */
  remoteAddress: string;
  durationMs: number;
  error: ErrorCodeName | undefined;
}

export interface ConnectionMessage {
  address: string;
  event: 'open' | 'closed' | 'goaway' | 'suspected';
  /** Why it closed, when that was unexpected; how long it was silent, when suspected. */
  reason: string | undefined;
}

/**
 * A call of a method with retries (`retries` > 0, the `failover` strategy) failed with an error that
 * would have been retried, but no retry was left: every attempt was made (`attempts`), or the service's
 * retry budget refused one more (`budget`). Published once per such call, and given to the reference's
 * `onRetriesExhausted` hook. A call that succeeded on a retry, or failed with an error that is never
 * retried (a business error), is not one.
 */
export interface RetriesExhaustedMessage {
  service: string;
  method: string;
  /** Attempts the call made. */
  attempts: number;
  /** `attempts`: all of them were made; `budget`: the service's retry budget refused another. */
  reason: 'attempts' | 'budget';
  /** The last attempt's error, what the caller gets. */
  error: RpcError;
  /** The provider of the last attempt (`host:port`, `injvm`). */
  address: string;
}

export interface ProtocolErrorMessage {
  remoteAddress: string;
  message: string;
}

/** @internal The channel objects, for Callisto's own publishers (subscribe by name instead). */
export const channels = {
  clientCall: diagnosticsChannel.channel(CHANNEL_NAMES.clientCall),
  serverCall: diagnosticsChannel.channel(CHANNEL_NAMES.serverCall),
  connection: diagnosticsChannel.channel(CHANNEL_NAMES.connection),
  protocolError: diagnosticsChannel.channel(CHANNEL_NAMES.protocolError),
  retriesExhausted: diagnosticsChannel.channel(CHANNEL_NAMES.retriesExhausted),
};

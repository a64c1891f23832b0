/**
 * One layer of a chain of calls retries (docs/cluster.md, "Context across hops"): without this, a
 * failure three hops down is retried by every layer above it, and three layers of 3 attempts make 27
 * calls to the failing service.
 *
 * - **Down**: a retry attempt (and a hedge) carries the `callisto-retry` attachment (the attempt number,
 *   or `hedge`). A call made while a provider method serves such a call inherits the marker and makes
 *   one attempt only (a failure that proves the request never left the process excepted): the layer
 *   that retries is the one above.
 * - **Up**: a call that failed after this layer retried it is remembered (`markRetried`); when a
 *   provider method fails with that very error, the provider answers with the `callisto-retried`
 *   response attachment, and the caller's layer does not retry it again.
 *
 * A reference with `inheritRetry: false` ignores both and retries as configured.
 */
import type { RpcError } from '../core/rpc-error.js';

/** The request attachment of a retry attempt (or a hedge): the attempt number, or `hedge`. */
export const RETRY_ATTACHMENT = 'callisto-retry';
/** The response attachment of a failure that a layer below already retried. */
export const RETRIED_ATTACHMENT = 'callisto-retried';

const retried = new WeakSet<object>();

/** Remembers that `error` is the failure of a call this layer retried (or that was retried below). */
export function markRetried(error: RpcError): void {
  retried.add(error);
}

/** Whether `error` (thrown by a provider method) is a failure some layer already retried. */
export function wasRetried(error: unknown): boolean {
  return typeof error === 'object' && error !== null && retried.has(error);
}

/**
 * Calls shed under overload, by reason: what the provider and the consumer refuse so that overload does
 * not collapse into work done for nobody (docs/operations.md, "Overload protection"). A shed call's
 * RpcError names its reason in `details.shed`; the metrics filters count them by it
 * (`callisto_shed_total`, `/stats`).
 *
 * - `deadline`: refused by the provider's deadline-aware admission (its budget was smaller than the
 *   method's expected service time), `Timeout` (never run, so it may fail over; not a health failure);
 * - `expired`: dropped by the provider before it ran, because its caller's deadline passed while it
 *   waited (in a worker pool's queue, a leaky bucket, behind an asynchronous filter), `Timeout`;
 * - `throttled`: refused by the consumer's adaptive throttling before it was sent, `Overloaded`;
 * - `limit`: refused by the provider's adaptive concurrency limit before it was decoded, `Overloaded`.
 */
import { type ErrorCodeName, RpcError, type RpcErrorInit, rpcErrorWithoutStack } from './rpc-error.js';

export type ShedReason = 'deadline' | 'expired' | 'throttled' | 'limit';

export const SHED_REASONS: readonly ShedReason[] = ['deadline', 'expired', 'throttled', 'limit'];

/** An RpcError for a call shed for `reason` (`details.shed`), without a stack (rpcErrorWithoutStack). */
export function shedError(
  code: ErrorCodeName,
  message: string,
  reason: ShedReason,
  init: RpcErrorInit = {},
): RpcError {
  return rpcErrorWithoutStack(code, message, { ...init, details: { ...init.details, shed: reason } });
}

/** Why `error` was shed here (never for an error that came from the other side), or undefined. */
export function shedReasonOf(error: unknown): ShedReason | undefined {
  if (!RpcError.is(error) || error.remote) return undefined;
  const reason = error.details.shed;
  return typeof reason === 'string' && (SHED_REASONS as readonly string[]).includes(reason)
    ? (reason as ShedReason)
    : undefined;
}

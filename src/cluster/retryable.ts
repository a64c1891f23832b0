/**
 * Whether a failed attempt may be sent again (to another provider, now or later): the one rule every
 * strategy that repeats a call shares (failover's retries, failback's background retries). A call may be
 * repeated when the error proves it never ran — it was never sent (`neverSent`), or the provider refused
 * it before running anything — and, when the method is idempotent, also after errors where it may have
 * run (`Network` after sending, `Timeout`, `Internal`, `Shutdown` of a call in progress). Business errors
 * (`ProviderError`) and cancellations are never repeated. A provider's refusal that says it was shed
 * before running (`details.shed` `deadline` or `expired`, a `Timeout`) proves the call never ran too.
 */
import type { ErrorCodeName, RpcError } from '../core/rpc-error.js';

/** Errors produced before the provider executed anything: safe to send elsewhere, whatever the method. */
const NOT_EXECUTED: ReadonlySet<ErrorCodeName> = new Set(['Shutdown', 'Overloaded', 'ServiceNotFound']);
/**
 * Errors after which an idempotent call may be repeated elsewhere: it may have run (`Shutdown` here is a
 * call the provider interrupted at its shutdown deadline, `details.started`).
 */
const RETRYABLE_IF_IDEMPOTENT: ReadonlySet<ErrorCodeName> = new Set([
  'Network',
  'Timeout',
  'Internal',
  'Shutdown',
]);

/** Whether `error` proves the call was not executed by any provider. */
export function provesNotExecuted(error: RpcError): boolean {
  if (error.neverSent) return true;
  if (!error.remote || error.details.started === true) return false;
  // shed by the provider before it ran (deadline-aware admission, expired in its queue): never executed
  return NOT_EXECUTED.has(error.code) || isShedUnrun(error.details.shed);
}

function isShedUnrun(reason: unknown): boolean {
  return reason === 'deadline' || reason === 'expired';
}

export function isRetryable(error: RpcError, idempotent: boolean, onRateLimited = false): boolean {
  if (error.code === 'ProviderError' || error.code === 'Cancelled') return false;
  // a provider's rate limit refused it before it ran: elsewhere only when the reference says so
  if (error.code === 'RateLimited' && error.remote) return onRateLimited;
  if (provesNotExecuted(error)) return true;
  return idempotent && RETRYABLE_IF_IDEMPOTENT.has(error.code);
}

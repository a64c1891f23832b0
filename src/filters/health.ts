/** Which outcomes say something about a provider's health: failures of the provider, never business errors. */
import { type ErrorCodeName, RpcError } from '../core/rpc-error.js';

const UNHEALTHY: ReadonlySet<ErrorCodeName> = new Set(['Network', 'Timeout', 'Overloaded', 'Internal']);

/** Whether an attempt's outcome leaves its provider healthy (success, business and request errors). */
export function isHealthy(error: unknown): boolean {
  if (error === undefined) return true;
  const rpc = RpcError.from(error);
  // refused by deadline-aware admission: the caller's budget was too short, the provider is fine
  if (rpc.remote && rpc.details.shed === 'deadline') return true;
  return !UNHEALTHY.has(rpc.code);
}

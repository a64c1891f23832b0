/**
 * A method's mock switch from an operator's override (runtime control, docs/governance.md), applied at
 * the bottom of the per-call chain, where `mock: 'force' | 'fail'` of the reference act:
 * - `force`: answered from the mock (the reference's `mockImpl`, else the method's declared `mock`, else
 *   undefined) without calling any provider;
 * - `fail`: called as usual; a failure other than a business error is answered from the mock.
 * The directory keeps the switches (undefined when there are none, so a call pays one property read).
 */
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { MockMode } from '../registry/override-record.js';

export function callWithMockSwitch(
  mode: MockMode | undefined,
  invocation: Invocation,
  call: (invocation: Invocation) => Promise<unknown>,
  answer: (args: unknown[]) => unknown,
): Promise<unknown> {
  if (mode === undefined) return call(invocation);
  if (mode === 'force') {
    try {
      return Promise.resolve(answer(invocation.args));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return call(invocation).catch((error: unknown) => {
    if (RpcError.is(error) && error.code === 'ProviderError') throw error;
    return answer(invocation.args);
  });
}

/**
 * A method's mock switch from an operator's override (runtime control, docs/governance.md), applied at
 * the bottom of the per-call chain, where `mock: 'force' | 'fail'` of the reference act:
 * - `force`: answered from the mock (the reference's `mockImpl`, else the method's declared `mock`)
 *   without calling any provider; a reference with no mock for the method fails the call with
 *   `NoProvider` saying so, never answers `undefined` (the control refuses such a switch, this is the
 *   defence in depth for a consumer it could not see);
 * - `fail`: called as usual; a failure other than a business error is answered from the mock (without
 *   a mock, the failure stays as it is).
 * The directory keeps the switches (undefined when there are none, so a call pays one property read).
 */
import type { ClusterInvocation } from '../cluster/cluster.js';
import { RpcError } from '../core/rpc-error.js';
import type { MockMode } from '../registry/override-record.js';

export function callWithMockSwitch(
  mode: MockMode | undefined,
  invocation: ClusterInvocation,
  call: (invocation: ClusterInvocation) => Promise<unknown>,
  /** The method's mock; undefined when the reference has none. */
  answer: ((args: unknown[]) => unknown) | undefined,
): Promise<unknown> {
  if (mode === undefined) return call(invocation);
  if (answer === undefined) {
    if (mode === 'fail') return call(invocation);
    return Promise.reject(
      new RpcError(
        'NoProvider',
        `an operator forced the mock of ${invocation.service.name}.${invocation.method}, but this reference has no mock for it (no mockImpl.${invocation.method}, no declared mock): refused rather than answered with undefined; switch it off (callisto mock ${invocation.service.name}.${invocation.method} off)`,
      ),
    );
  }
  if (mode === 'force') {
    try {
      return Promise.resolve(answer(invocation.args));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  // the mock may still answer after the strategy failed: the per-call end hooks wait for that
  invocation.settleHooks = undefined;
  return call(invocation).catch((error: unknown) => {
    if (RpcError.is(error) && error.code === 'ProviderError') throw error;
    return answer(invocation.args);
  });
}

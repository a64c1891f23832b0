import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { type ClientCallMessage, channels } from './channels.js';

/**
 * Publishes how `result` (one attempt of `invocation` to `address`) ends on the client-call channel.
 * Callers check `channels.clientCall.hasSubscribers` first, so nothing is paid when nobody listens.
 */
export function observeClientCall(
  result: Promise<unknown>,
  invocation: Invocation,
  address: string,
): Promise<unknown> {
  const startedAt = performance.now();
  const publish = (error: ClientCallMessage['error']) => {
    const message: ClientCallMessage = {
      service: invocation.service.name,
      method: invocation.method,
      address,
      durationMs: performance.now() - startedAt,
      error,
    };
    channels.clientCall.publish(message);
  };
  result.then(
    () => publish(undefined),
    (error: unknown) => publish(RpcError.from(error).code),
  );
  return result;
}

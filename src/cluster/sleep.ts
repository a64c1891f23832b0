import { RpcError } from '../core/rpc-error.js';

/** Waits `ms`, or rejects with Cancelled when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new RpcError('Cancelled', 'call cancelled by the caller'));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RpcError('Cancelled', 'call cancelled by the caller'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

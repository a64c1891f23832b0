/** A call waiting for its answer on a client connection, and who is told how it ended. */
import type { RpcError } from '../core/rpc-error.js';
import type { MethodRoute } from './method-route.js';

/**
 * Told when a call starts and how it ended, synchronously, before the caller's promise settles (the
 * cluster layer's per-provider counters), so no extra promise is chained per call.
 */
export interface CallTracker {
  callStarted(): void;
  callEnded(latencyMs: number, error: RpcError | undefined): void;
}

export class PendingCall {
  readonly startedAt: number;

  constructor(
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: RpcError) => void,
    readonly route: MethodRoute,
    readonly signal: AbortSignal | undefined,
    readonly onAbort: (() => void) | undefined,
    readonly tracker: CallTracker | undefined,
  ) {
    this.startedAt = tracker === undefined ? 0 : performance.now();
  }

  /** Detaches the abort listener and reports the outcome to the tracker. */
  settle(error?: RpcError): void {
    if (this.onAbort !== undefined) this.signal!.removeEventListener('abort', this.onAbort);
    this.tracker?.callEnded(performance.now() - this.startedAt, error);
  }

  fail(error: RpcError): void {
    this.settle(error);
    this.reject(error);
  }
}

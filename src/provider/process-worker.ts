/**
 * The worker side of `server.workers` (process-cluster.ts starts the workers): whether this process is
 * one of them, the port its primary chose, telling the primary it serves, and hearing what the primary
 * asks (`retire`: leave, the address stays served by the others; `shutdown`: the whole cluster stops).
 * The variables are not `CALLISTO_*` ones (those are configuration keys).
 */
import cluster from 'node:cluster';

/** Set by the primary in each worker's environment: its worker number (1, 2, …). */
export const WORKER_VARIABLE = '__CALLISTO_WORKER';
/** Set by the primary: the port every worker listens on. */
export const PORT_VARIABLE = '__CALLISTO_WORKER_PORT';

/** What a worker tells its primary. */
export interface WorkerReport {
  readonly callisto: 'ready';
  readonly port: number;
}

/** What a primary asks a worker. */
export interface PrimaryRequest {
  readonly callisto: 'retire' | 'shutdown';
}

/** This process's worker number when it is a worker of a Callisto primary, else undefined. */
export function workerNumber(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const value = Number(process.env[WORKER_VARIABLE]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The port the primary chose for every worker (undefined outside a worker). */
export function workerPort(): number | undefined {
  const value = Number(process.env[PORT_VARIABLE]);
  return workerNumber() !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Tells the primary this worker serves on `port`. */
export function reportReady(port: number): void {
  process.send?.({ callisto: 'ready', port } satisfies WorkerReport);
}

/** Calls `handler` once when the primary asks this worker to leave; returns a function removing it. */
export function onPrimaryRequest(handler: (kind: 'retire' | 'shutdown') => void): () => void {
  const listener = (message: unknown): void => {
    const kind = (message as Partial<PrimaryRequest> | null)?.callisto;
    if (kind === 'retire' || kind === 'shutdown') {
      process.off('message', listener);
      handler(kind);
    }
  };
  process.on('message', listener);
  return () => process.off('message', listener);
}

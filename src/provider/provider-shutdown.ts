/**
 * The provider's part of a graceful shutdown (the app's sequence is app/shutdown.ts), one deadline:
 *   1. unregister every provided service (consumers following the registry stop routing here)
 *   2. on the primary of `server.workers`: each worker shuts down as below (this waits for them)
 *   3. tell every connected consumer "going away" (RPC and HTTP): they stop routing new calls at once,
 *      and close their side once every call they sent is answered; a retiring worker instead says
 *      "reconnect" and keeps answering until its consumers moved
 *   4. keep serving calls in flight until they finish or the deadline passes; the rest are answered
 *      with a Shutdown error, and new ones refused with it
 *   5. stop the worker threads of worker executors once they finished what they run (same deadline)
 *   6. `afterDrain` (the app closes its consumer side there, while the provider's connections are open)
 *   7. close server connections, each once its consumer has closed its side (1 s grace), the HTTP entry
 *      and the gRPC entry (its health service says NOT_SERVING from step 1, GOAWAY goes out at step 3)
 */
import type { Logger } from '../observability/logger.js';
import type { WorkerPool } from './executor-pool.js';
import type { GrpcEntry } from './grpc/grpc-entry.js';
import type { HttpEntry } from './http/http-entry.js';
import type { ProcessCluster } from './process-cluster.js';
import type { Registration } from './registration.js';
import type { RpcServer } from './server.js';

/** How the provider shuts down. */
export interface ProviderShutdownOptions {
  /**
   * A worker of `server.workers` leaving while the others go on (a rolling restart): it stops
   * listening and tells its consumers to reconnect to the same address, instead of "going away".
   */
  readonly retire?: boolean | undefined;
  /** Runs once calls are drained, before the provider's connections close. */
  readonly afterDrain?: ((remainingMs: number) => Promise<void>) | undefined;
}

/** The parts a shutdown goes through (what the provider started). */
export interface ShutdownSteps {
  readonly registration: Registration;
  readonly processes: ProcessCluster | undefined;
  readonly server: RpcServer | undefined;
  readonly http: HttpEntry | undefined;
  /** The gRPC entry: NOT_SERVING at once, GOAWAY with the others, closed last. */
  readonly grpc?: GrpcEntry | undefined;
  readonly pools: readonly WorkerPool[];
  readonly logger: Logger;
}

export async function shutdownProvider(
  steps: ShutdownSteps,
  deadline: number,
  options: ProviderShutdownOptions = {},
): Promise<void> {
  const { server, http, grpc, logger } = steps;
  const remaining = () => Math.max(0, deadline - Date.now());
  // health checks (grpc.health.v1) say NOT_SERVING from the first step, as readiness does
  grpc?.health.shutDown();
  await withTimeout(steps.registration.unregisterAll(), remaining(), () =>
    logger.warn('unregister timed out'),
  );
  await steps.processes?.close();
  http?.goAway();
  grpc?.goAway();
  if (server) {
    server.goAway(options.retire === true);
    // a retiring worker keeps answering until its consumers moved to a new connection (to the others)
    if (options.retire) await server.close(remaining());
    const drained = await server.drain(remaining());
    server.refuse();
    if (!drained) {
      logger.warn(
        `shutdown deadline reached with ${server.active} calls in flight; answering them with Shutdown`,
      );
      server.abandonInFlight();
    }
  }
  await Promise.all(steps.pools.map((pool) => pool.close(remaining())));
  await options.afterDrain?.(remaining());
  // together: the RPC port stops listening only once its HTTP/2 connections (the gRPC entry's) closed too
  await Promise.all([server?.close(), grpc?.close(Math.max(1_000, remaining()))]);
  await http?.close();
}

/** Waits for `work` at most `ms`; `onTimeout` when it took longer. */
export async function withTimeout(work: Promise<unknown>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), ms);
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), expired]);
  clearTimeout(timer);
  if (outcome === 'expired') onTimeout();
}

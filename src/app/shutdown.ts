/**
 * Graceful shutdown, one sequence with one deadline:
 *   1. readiness false, stop accepting new work at the app level
 *   2. unregister every provided service (consumers following the registry stop routing here)
 *   3. tell every connected consumer "going away" (they stop routing new calls at once, and close their
 *      side of the connection once every call they sent is answered)
 *   4. keep serving calls in flight until they finish or the deadline passes; the rest are answered
 *      with a Shutdown error
 *   5. stop the worker threads of worker executors once they finished what they run (same deadline)
 *   6. close the consumer side (waits for its own pending responses, bounded by their timeouts)
 *   7. close server connections, each once its consumer has closed its side (1 s grace), then the
 *      registries, last
 */

import type { Consumer } from '../consumer/consumer.js';
import type { Logger } from '../observability/logger.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ProviderSide } from './provider-side.js';

export interface ShutdownParts {
  provider: ProviderSide;
  consumer: Consumer;
  registries: RegistrySet;
  logger: Logger;
  timeoutMs: number;
  /**
   * A worker of `server.workers` leaving while the others go on (a rolling restart): it stops
   * listening and tells its consumers to reconnect to the same address, instead of "going away".
   */
  retire?: boolean;
}

export async function gracefulShutdown(parts: ShutdownParts): Promise<void> {
  const { provider, consumer, registries, logger, timeoutMs } = parts;
  const deadline = Date.now() + timeoutMs;
  const remaining = () => Math.max(0, deadline - Date.now());
  await withTimeout(provider.unregisterAll(), remaining(), () => logger.warn('unregister timed out'));
  // the primary of server.workers: each worker shuts down as below (it waits for them)
  await provider.processes?.close();
  const server = provider.server;
  provider.http?.goAway();
  if (server) {
    server.goAway(parts.retire === true);
    // a retiring worker keeps answering until its consumers moved to a new connection (to the others)
    if (parts.retire) await server.close(remaining());
    const drained = await server.drain(remaining());
    server.refuse();
    if (!drained) {
      logger.warn(
        `shutdown deadline reached with ${server.active} calls in flight; answering them with Shutdown`,
      );
      server.abandonInFlight();
    }
  }
  await provider.closeExecutors(remaining());
  await withTimeout(consumer.close(), remaining(), () => {
    logger.warn('consumer calls still pending at the shutdown deadline; closing their connections');
    consumer.destroy();
  });
  if (server) await server.close();
  await provider.http?.close();
  await registries.close();
}

async function withTimeout(work: Promise<unknown>, ms: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), ms);
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), expired]);
  clearTimeout(timer);
  if (outcome === 'expired') onTimeout();
}

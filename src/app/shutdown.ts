/**
 * Graceful shutdown, one sequence with one deadline:
 *   1. readiness false, stop accepting new work at the app level (the app's state)
 *   2. the provider's shutdown (provider/provider-shutdown.ts): unregister, "going away", drain calls in
 *      flight (the rest answered with Shutdown), stop the worker threads
 *   3. meanwhile, once drained and before the provider's connections close: close the consumer side
 *      (waits for its own pending responses, bounded by their timeouts)
 *   4. the provider closes its connections, each once its consumer has closed its side (1 s grace)
 *   5. the registries, last
 */

import type { Consumer } from '../consumer/consumer.js';
import type { Logger } from '../observability/logger.js';
import type { Provider } from '../provider/provider.js';
import { withTimeout } from '../provider/provider-shutdown.js';
import type { RegistrySet } from '../registry/registry-set.js';

export interface ShutdownParts {
  provider: Provider;
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
  await provider.shutdown(Date.now() + timeoutMs, {
    retire: parts.retire === true,
    afterDrain: (remainingMs) =>
      withTimeout(consumer.close(), remainingMs, () => {
        logger.warn('consumer calls still pending at the shutdown deadline; closing their connections');
        consumer.destroy();
      }),
  });
  await registries.close();
}

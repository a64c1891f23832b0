/**
 * The worker executors of one provided service (`provide(…, { executor, methods: { m: { executor } } })`,
 * docs/operations.md): one pool of worker threads for the methods that run on the service's executor,
 * one per method that names its own; each such method's chain ends in a step that runs it in its pool
 * (executor-step.ts) instead of on the loop.
 */

import { ConfigError } from '../core/config-error.js';
import type { Step } from '../core/filter.js';
import type { Logger } from '../observability/logger.js';
import type { ServiceDefinition } from '../service/define-service.js';
import { type ResolvedWorkerExecutor, resolveExecutor } from './executor-options.js';
import { createWorkerPool, type WorkerPool } from './executor-pool.js';
import { workerStep } from './executor-step.js';
import type { ProvideOptions } from './provide-options.js';
import type { ServerInvocation } from './server-invocation.js';

export interface ServiceExecutors {
  /** What runs a method in place of the implementation, when it runs in a worker pool. */
  terminalOf(method: string, label: string): Step<ServerInvocation> | undefined;
  /** The pools made for the service (once `terminalOf` was asked for each method). */
  readonly pools: readonly WorkerPool[];
}

/** What a service's executors are made from. */
export interface ServiceExecutorsParts {
  readonly definition: ServiceDefinition<unknown>;
  readonly options: ProvideOptions;
  /** `provide(Service)`, for messages. */
  readonly where: string;
  readonly logger: Logger;
}

/** Checks the service's executor options (a ConfigError names the key) and makes its pools on demand. */
export function createServiceExecutors(parts: ServiceExecutorsParts): ServiceExecutors {
  const { definition, options, where, logger } = parts;
  const serviceExecutor = resolveExecutor(options.executor, `${where}.executor`);
  const methodExecutors = new Map<string, ResolvedWorkerExecutor | undefined>();
  for (const [method, methodOptions] of Object.entries(options.methods ?? {})) {
    const option = (methodOptions as { executor?: unknown } | undefined)?.executor;
    if (option !== undefined)
      methodExecutors.set(method, resolveExecutor(option, `${where}.methods.${method}.executor`));
  }
  /** One pool for the service's worker methods, one per method that names its own. */
  const servicePool: { pool?: WorkerPool; methods: string[] } = { methods: [] };
  const pools: WorkerPool[] = [];
  const poolFor = (spec: ResolvedWorkerExecutor, methods: string[]): WorkerPool => {
    const pool = createWorkerPool(spec, definition.name, methods, (message) => logger.error(message));
    pools.push(pool);
    return pool;
  };
  return {
    pools,
    terminalOf(method, label) {
      const spec = methodExecutors.has(method) ? methodExecutors.get(method) : serviceExecutor;
      if (spec === undefined) return undefined;
      const stream = definition.methods?.[method]?.stream;
      if (stream !== undefined) {
        const key = methodExecutors.has(method) ? `${where}.methods.${method}.executor` : `${where}.executor`;
        throw new ConfigError(
          key,
          'worker',
          `'loop' for ${method}, a ${stream} stream: worker-thread executors do not serve streams yet (set methods.${method}.executor: 'loop')`,
        );
      }
      let pool: WorkerPool;
      if (spec === serviceExecutor) {
        servicePool.pool ??= poolFor(spec, servicePool.methods);
        servicePool.methods.push(method);
        pool = servicePool.pool;
      } else pool = poolFor(spec, [method]);
      return workerStep(pool, label, definition.errors);
    },
  };
}

/**
 * Where a provided method runs: `'loop'` (the default: on the app's event loop, as every call did
 * before) or a pool of worker threads that load the implementation from a module of their own
 * (`provide(def, impl, { executor: { kind: 'worker', module: new URL('./impl.js', import.meta.url) } })`).
 * Declared per service (`ProvideOptions.executor`) or per method (`methods.<name>.executor`); checked
 * once, at `provide()`, with the key and the fix in the message.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

/** A file URL (a `URL` object fits) or an absolute path. */
export type ModuleLocation = string | { readonly href: string; readonly protocol: string };

/** A pool of worker threads running a method (docs/operations.md, "Worker-thread executors"). */
export interface WorkerExecutorOptions {
  readonly kind: 'worker';
  /**
   * The module the threads load the implementation from: a file URL (`new URL('./impl.js',
   * import.meta.url)`) or an absolute path. It must export the implementation (see `export`).
   */
  readonly module: ModuleLocation;
  /** The module's export holding the implementation object. Default 'default'. */
  readonly export?: string;
  /**
   * Threads in the pool. Default: the machine's cores less one (`os.availableParallelism() - 1`, at
   * least 1), leaving a core to the event loop (I/O, heartbeats, cheap methods).
   */
  readonly threads?: number;
  /**
   * Calls that may wait for a free thread; beyond them a call is refused with `Overloaded` before it
   * runs (consumers fail it over to another provider). Default 256.
   */
  readonly queue?: number;
  /**
   * What a call's deadline or cancellation does to a call already running in a thread: `'signal'`
   * (default) aborts the signal the handler sees (`callContext().signal`) and drops its result, the
   * thread staying busy until the handler returns; `'terminate'` stops the thread at once and starts a
   * new one (for handlers that never look at their signal; costs a thread start).
   */
  readonly cancel?: 'signal' | 'terminate';
  /**
   * Memory each thread may use (node:worker_threads `resourceLimits`, MB): a thread past it is stopped
   * (its call fails `Internal`, the thread is replaced) instead of growing to the whole process's heap.
   * Default `{ maxOldGenerationSizeMb: <a quarter of the main thread's heap limit, at least 128> }`; the
   * other limits are Node's defaults unless given.
   */
  readonly resourceLimits?: WorkerResourceLimits;
}

/** The limits of one worker thread, MB (node:worker_threads `ResourceLimits`). */
export interface WorkerResourceLimits {
  /** The thread's main heap. Default a quarter of the main thread's heap limit, at least 128. */
  readonly maxOldGenerationSizeMb?: number;
  /** The heap space for recently created objects. Default Node's. */
  readonly maxYoungGenerationSizeMb?: number;
  /** Memory for generated code. Default Node's. */
  readonly codeRangeSizeMb?: number;
  /** The thread's stack. Default Node's (4). */
  readonly stackSizeMb?: number;
}

/** The default old-generation limit of a worker thread, MB: a quarter of this process's heap limit, at least 128. */
export function defaultWorkerHeapMb(): number {
  return Math.max(128, Math.floor(v8.getHeapStatistics().heap_size_limit / (4 * 1024 * 1024)));
}

/** `executor` of provide() options: `'loop'` (default) or a worker pool. */
export type ExecutorOption = 'loop' | WorkerExecutorOptions;

export const DEFAULT_WORKER_QUEUE = 256;

/** A worker executor with its defaults filled. */
export interface ResolvedWorkerExecutor {
  /** The module's file URL. */
  readonly module: string;
  readonly exportName: string;
  readonly threads: number;
  readonly queue: number;
  readonly cancel: 'signal' | 'terminate';
  readonly resourceLimits: WorkerResourceLimits & { readonly maxOldGenerationSizeMb: number };
}

const isPositiveInt = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value > 0;

/**
 * Checks an `executor` option (at `where`, e.g. `provide(example.Hasher).executor`): undefined for the
 * loop, the filled worker options otherwise; a TypeError naming the key and the fix when it is wrong.
 */
export function resolveExecutor(option: unknown, where: string): ResolvedWorkerExecutor | undefined {
  if (option === undefined || option === 'loop') return undefined;
  if (typeof option !== 'object' || option === null || (option as { kind?: unknown }).kind !== 'worker') {
    throw new TypeError(
      `${where}: must be 'loop' or { kind: 'worker', module: new URL('./impl.js', import.meta.url) }, not ${JSON.stringify(option)}`,
    );
  }
  const spec = option as WorkerExecutorOptions;
  const known = new Set(['kind', 'module', 'export', 'threads', 'queue', 'cancel', 'resourceLimits']);
  for (const key of Object.keys(spec)) {
    if (!known.has(key))
      throw new TypeError(`${where}.${key}: unknown option (known: ${[...known].join(', ')})`);
  }
  const module = moduleUrl(spec.module, `${where}.module`);
  const exportName = spec.export ?? 'default';
  if (typeof exportName !== 'string' || exportName === '') {
    throw new TypeError(
      `${where}.export: must be the name of the module's export, not ${JSON.stringify(exportName)}`,
    );
  }
  const threads = spec.threads ?? Math.max(1, availableParallelism() - 1);
  if (!isPositiveInt(threads) || threads > 1024) {
    throw new TypeError(
      `${where}.threads: must be an integer from 1 to 1024, not ${JSON.stringify(spec.threads)}`,
    );
  }
  const queue = spec.queue ?? DEFAULT_WORKER_QUEUE;
  if (typeof queue !== 'number' || !Number.isInteger(queue) || queue < 0) {
    throw new TypeError(
      `${where}.queue: must be an integer >= 0 (calls waiting for a thread), not ${JSON.stringify(spec.queue)}`,
    );
  }
  const cancel = spec.cancel ?? 'signal';
  if (cancel !== 'signal' && cancel !== 'terminate') {
    throw new TypeError(
      `${where}.cancel: must be 'signal' or 'terminate', not ${JSON.stringify(spec.cancel)}`,
    );
  }
  return {
    module,
    exportName,
    threads,
    queue,
    cancel,
    resourceLimits: resolveLimits(spec.resourceLimits, where),
  };
}

const LIMIT_KEYS = ['maxOldGenerationSizeMb', 'maxYoungGenerationSizeMb', 'codeRangeSizeMb', 'stackSizeMb'];

function resolveLimits(
  limits: WorkerResourceLimits | undefined,
  where: string,
): ResolvedWorkerExecutor['resourceLimits'] {
  if (limits !== undefined && (typeof limits !== 'object' || limits === null)) {
    throw new TypeError(
      `${where}.resourceLimits: must be an object of MB limits, not ${JSON.stringify(limits)}`,
    );
  }
  for (const [key, value] of Object.entries(limits ?? {})) {
    if (!LIMIT_KEYS.includes(key)) {
      throw new TypeError(`${where}.resourceLimits.${key}: unknown limit (known: ${LIMIT_KEYS.join(', ')})`);
    }
    if (value !== undefined && (typeof value !== 'number' || !(value > 0))) {
      throw new TypeError(
        `${where}.resourceLimits.${key}: must be a number of MB > 0, not ${JSON.stringify(value)}`,
      );
    }
  }
  return { ...limits, maxOldGenerationSizeMb: limits?.maxOldGenerationSizeMb ?? defaultWorkerHeapMb() };
}

function moduleUrl(value: unknown, where: string): string {
  if (typeof value === 'object' && value !== null && typeof (value as URL).href === 'string') {
    const url = value as URL;
    if (url.protocol !== 'file:') throw new TypeError(`${where}: must be a file URL, not ${url.href}`);
    return url.href;
  }
  if (typeof value === 'string' && value.startsWith('file:')) {
    fileURLToPath(value);
    return value;
  }
  if (typeof value === 'string' && (value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value))) {
    return pathToFileURL(value).href;
  }
  throw new TypeError(
    `${where}: must be a file URL or an absolute path (e.g. new URL('./impl.js', import.meta.url)), not ${JSON.stringify(value)}`,
  );
}

/**
 * A pool of worker threads for one worker executor: `threads` threads, each running one call at a time,
 * and a queue of at most `queue` calls waiting for a thread; a call beyond it is refused at once with
 * `Overloaded` (it never ran: a consumer fails it over). A call's signal (the caller's deadline or
 * cancellation, or the shutdown deadline) takes a waiting call out of the queue — one whose deadline
 * passed there is answered `Timeout` with `details.shed: 'expired'`, and a thread that becomes free
 * checks the deadline again before it takes the next call, in case the signal's timer is late on a busy
 * loop: a call is never run for a caller who gave up while it waited —, and a running one is
 * answered at once with the signal's reason while its thread is told (`cancel: 'signal'`: the handler's
 * signal fires and its late result is dropped) or stopped and replaced (`cancel: 'terminate'`). A thread
 * that dies (an uncaught error, `process.exit()`, out of memory) fails only the call it was running,
 * and is replaced. Hand-written rather than a pool library: a handler's signal must be aborted without
 * stopping its thread, and answers carry attachments and errors with their fields (docs/operations.md).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Attachments } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { shedError } from '../core/shed.js';
import type { FromThread, ThreadData, ThrownRecord, ToThread } from './executor-messages.js';
import type { ResolvedWorkerExecutor } from './executor-options.js';

/** One call for a thread (the `call` message less its id). */
export type ThreadCall = Omit<Extract<ToThread, { t: 'call' }>, 't' | 'id'>;

/** How a call ended in its thread: a value, or what the handler threw; with the response attachments. */
export type ThreadOutcome =
  | { readonly ok: true; readonly value: unknown; readonly attachments: Attachments | undefined }
  | { readonly ok: false; readonly error: ThrownRecord; readonly attachments: Attachments | undefined };

export interface WorkerPool {
  /** Starts the threads; rejects (naming the module and what is wrong) when one cannot load it. */
  start(): Promise<void>;
  /**
   * Runs `call` in a thread. Throws `Overloaded` at once when every thread is busy and the queue is
   * full; rejects with the signal's reason when it fires first, or `Internal` when the thread dies.
   */
  run(call: ThreadCall, label: string, signal: AbortSignal | undefined): Promise<ThreadOutcome>;
  /** Threads running a call (including calls given up but not yet returned). */
  readonly busy: number;
  /** Calls waiting for a thread. */
  readonly queued: number;
  /** `closing` once a close began (threads finish what they run), `closed` once they were stopped. */
  readonly state: 'created' | 'starting' | 'running' | 'closing' | 'closed';
  /** Threads alive and ready. */
  readonly threads: number;
  /** Threads replaced after they died or were stopped. */
  readonly replaced: number;
  /** Waits until no thread runs anything (or `timeoutMs`), then stops the threads. Idempotent. */
  close(timeoutMs: number): Promise<void>;
  /** Stops the threads now; calls still waiting or running fail with Shutdown. */
  destroy(): void;
}

interface Job {
  readonly id: number;
  readonly call: ThreadCall;
  readonly label: string;
  readonly signal: AbortSignal | undefined;
  resolve(outcome: ThreadOutcome): void;
  reject(error: RpcError): void;
  /** Set once the caller was answered (its outcome, a signal, a crash). */
  settled: boolean;
  onAbort: (() => void) | undefined;
}

interface Thread {
  readonly worker: Worker;
  ready: boolean;
  /** The job running, also after it was given up (until the thread answers or dies). */
  job: Job | undefined;
  /** Why it died, once it did. */
  failure: string | undefined;
  /** Stopped on purpose (a cancelled call with `cancel: 'terminate'`): its exit is no failure. */
  stopped: boolean;
}

const here = import.meta.url;
/** Running from the TypeScript sources (tests, tsx): the thread needs the tsx loader too. */
const fromSource = here.endsWith('.ts');
const threadEntry = new URL(fromSource ? './executor-worker.ts' : './executor-worker.js', here);

/** The file URL of tsx's ESM register API (its import condition). */
function tsxApi(): string {
  const manifest = createRequire(here).resolve('tsx/package.json');
  const exports = JSON.parse(readFileSync(manifest, 'utf8')).exports['./esm/api'] as {
    import: { default: string };
  };
  return pathToFileURL(path.join(path.dirname(manifest), exports.import.default)).href;
}

function startWorker(data: ThreadData, resourceLimits: ResolvedWorkerExecutor['resourceLimits']): Worker {
  const typescript = fromSource || /\.[cm]?ts$/.test(data.module);
  if (!typescript) return new Worker(threadEntry, { workerData: data, resourceLimits });
  const tsx = tsxApi();
  const code = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(threadEntry.href)}); })`;
  return new Worker(code, { eval: true, workerData: data, resourceLimits });
}

/** The answer to a call whose caller's deadline passed while it waited for a thread. */
function expiredInQueue(label: string): RpcError {
  return shedError(
    'Timeout',
    `${label}: the caller's deadline passed while the call waited for a worker thread; not run`,
    'expired',
  );
}

export function createWorkerPool(
  options: ResolvedWorkerExecutor,
  service: string,
  methods: readonly string[],
  onThreadFailure: (message: string) => void,
): WorkerPool {
  const data: ThreadData = { module: options.module, exportName: options.exportName, methods, service };
  const threads = new Set<Thread>();
  const idle: Thread[] = [];
  const waiting: Job[] = [];
  let nextId = 1;
  let replaced = 0;
  let state: 'created' | 'starting' | 'running' | 'closing' | 'closed' = 'created';
  let startPromise: Promise<void> | undefined;
  const idleWaiters: Array<() => void> = [];

  const busyCount = (): number => {
    let busy = 0;
    for (const thread of threads) if (thread.job !== undefined) busy++;
    return busy;
  };

  const settle = (job: Job): void => {
    job.settled = true;
    if (job.onAbort !== undefined) job.signal!.removeEventListener('abort', job.onAbort);
    job.onAbort = undefined;
  };

  const wakeIdle = (): void => {
    if (busyCount() === 0 && waiting.length === 0) for (const wake of idleWaiters.splice(0)) wake();
  };

  const dispatchNext = (thread: Thread): void => {
    while (waiting.length > 0) {
      const job = waiting.shift()!;
      if (job.settled) continue;
      // its caller's deadline passed while it waited (its signal's timer may not have fired yet)
      if (job.call.deadline > 0 && Date.now() >= job.call.deadline) {
        settle(job);
        job.reject(expiredInQueue(job.label));
        continue;
      }
      thread.job = job;
      thread.worker.postMessage({ t: 'call', id: job.id, ...job.call } satisfies ToThread);
      return;
    }
    idle.push(thread);
    wakeIdle();
  };

  const onMessage = (thread: Thread, message: FromThread): void => {
    if (message.t === 'ready' || message.t === 'load-error') return;
    const job = thread.job;
    if (job === undefined || job.id !== message.id) return;
    thread.job = undefined;
    if (!job.settled) {
      settle(job);
      job.resolve(
        message.t === 'done'
          ? { ok: true, value: message.value, attachments: message.attachments }
          : { ok: false, error: message.error, attachments: message.attachments },
      );
    }
    dispatchNext(thread);
  };

  const spawn = (): Promise<void> => {
    const worker = startWorker(data, options.resourceLimits);
    worker.unref();
    const thread: Thread = { worker, ready: false, job: undefined, failure: undefined, stopped: false };
    threads.add(thread);
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        if (message.t === 'ready') {
          thread.ready = true;
          resolve();
          dispatchNext(thread);
        } else if (message.t === 'load-error') {
          thread.failure = message.message;
          reject(new Error(message.message));
          void worker.terminate();
        } else onMessage(thread, message);
      });
      worker.on('error', (error) => {
        thread.failure ??= (error as Error)?.message ?? String(error);
      });
      worker.on('exit', (code) => {
        threads.delete(thread);
        const at = idle.indexOf(thread);
        if (at >= 0) idle.splice(at, 1);
        if (!thread.ready) {
          reject(new Error(thread.failure ?? `the worker thread exited (code ${code}) before it was ready`));
          return;
        }
        const job = thread.job;
        thread.job = undefined;
        if (job !== undefined && !job.settled) {
          settle(job);
          job.reject(
            new RpcError(
              'Internal',
              `${job.label}: the worker thread running it died (exit code ${code}; the provider's log says why)`,
            ),
          );
        }
        if (state === 'running' || (state === 'closing' && waiting.length > 0)) {
          replaced++;
          if (!thread.stopped)
            onThreadFailure(
              `${service}: a worker thread died (exit code ${code})${thread.failure === undefined ? '' : `: ${thread.failure}`}${job === undefined ? '' : `, failing ${job.label}`}; starting another`,
            );
          spawn().catch((error: Error) =>
            onThreadFailure(`${service}: replacing a worker thread failed: ${error.message}`),
          );
        }
        wakeIdle();
      });
    });
  };

  const abortJob = (job: Job): void => {
    if (job.settled) return;
    const reason = RpcError.from(job.signal!.reason, 'Cancelled');
    settle(job);
    const at = waiting.indexOf(job);
    // a call whose caller's deadline passed while it waited for a thread is shed: it never ran
    job.reject(at >= 0 && reason.code === 'Timeout' ? expiredInQueue(job.label) : reason);
    for (const thread of threads) {
      if (thread.job !== job) continue;
      if (options.cancel === 'terminate') {
        thread.stopped = true;
        void thread.worker.terminate();
      } else
        thread.worker.postMessage({
          t: 'cancel',
          id: job.id,
          code: reason.code,
          message: reason.message,
        } satisfies ToThread);
      return;
    }
    // still waiting: dispatchNext skips it
    if (at >= 0) waiting.splice(at, 1);
    wakeIdle();
  };

  const stopAll = (): void => {
    state = 'closed';
    for (const job of waiting.splice(0)) {
      if (job.settled) continue;
      settle(job);
      job.reject(new RpcError('Shutdown', `${job.label}: the provider is shutting down`));
    }
    for (const thread of threads) void thread.worker.terminate();
    idle.length = 0;
  };

  return {
    start() {
      if (startPromise !== undefined) return startPromise;
      state = 'starting';
      startPromise = Promise.all(Array.from({ length: options.threads }, spawn)).then(
        () => {
          if (state === 'starting') state = 'running';
        },
        (error: Error) => {
          stopAll();
          throw new Error(`${service}: the worker executor cannot start: ${error.message}`);
        },
      );
      return startPromise;
    },
    run(call, label, signal) {
      if (state === 'closed') {
        return Promise.reject(new RpcError('Shutdown', `${label}: the provider is shutting down`));
      }
      if (signal?.aborted) return Promise.reject(RpcError.from(signal.reason, 'Cancelled'));
      const thread = idle.pop();
      if (thread === undefined && waiting.length >= options.queue) {
        throw new RpcError(
          'Overloaded',
          `${label}: every worker thread is busy (${options.threads}) and ${waiting.length} calls wait (executor.queue)`,
        );
      }
      return new Promise<ThreadOutcome>((resolve, reject) => {
        const job: Job = {
          id: nextId++,
          call,
          label,
          signal,
          resolve,
          reject,
          settled: false,
          onAbort: undefined,
        };
        if (signal !== undefined) {
          job.onAbort = () => abortJob(job);
          signal.addEventListener('abort', job.onAbort, { once: true });
        }
        if (thread !== undefined) {
          thread.job = job;
          thread.worker.postMessage({ t: 'call', id: job.id, ...call } satisfies ToThread);
        } else waiting.push(job);
      });
    },
    get busy() {
      return busyCount();
    },
    get queued() {
      return waiting.length;
    },
    get replaced() {
      return replaced;
    },
    get state() {
      return state;
    },
    get threads() {
      let ready = 0;
      for (const thread of threads) if (thread.ready) ready++;
      return ready;
    },
    async close(timeoutMs) {
      if (state === 'closed') return;
      if (state === 'running' || state === 'starting') state = 'closing';
      if (busyCount() > 0 || waiting.length > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          idleWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      const exits = [...threads].map((thread) => thread.worker.terminate());
      stopAll();
      await Promise.allSettled(exits);
    },
    destroy() {
      stopAll();
    },
  };
}

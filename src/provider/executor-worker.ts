/**
 * The program of one worker thread of a worker executor (executor-pool.ts starts it): loads the
 * implementation from its module, says `ready` (or why not), then runs the calls it is sent one at a
 * time, each in a call context of its own (`callContext()` gives the caller's attachments, the deadline,
 * a signal the loop aborts on the caller's deadline or cancellation, and the response attachments,
 * which travel back with the answer), and posts how each ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { IdTable } from '../core/id-table.js';
import { type Attachments, type Invocation, nonEmptyAttachments } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import { runInCallContext } from './call-context.js';
import {
  type FromThread,
  recordThrown,
  type ThreadCall,
  type ThreadData,
  type ToThread,
} from './executor-messages.js';

/** One call as the handler sees it in the thread. */
class ThreadInvocation implements Invocation {
  readonly #controller = new AbortController();
  #responseAttachments: Attachments | undefined;
  readonly service: ServiceKey;
  readonly method: string;
  readonly args: unknown[];
  public attachments: Attachments;
  public deadline: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  public remoteAddress: string | undefined;
  /** From the loop's message for the call (executor-messages.ts). */
  constructor(call: ThreadCall) {
    this.service = call.service;
    this.method = call.method;
    this.args = call.args;
    this.attachments = call.attachments;
    this.deadline = call.deadline;
    this.oneway = call.oneway;
    this.idempotent = call.idempotent;
    this.remoteAddress = call.remoteAddress;
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  abort(reason: RpcError): void {
    this.#controller.abort(reason);
  }
  get responseAttachments(): Attachments {
    this.#responseAttachments ??= {};
    return this.#responseAttachments;
  }
  set responseAttachments(value: Attachments) {
    this.#responseAttachments = value;
  }
  /** The response attachments to send, or undefined. */
  get answerAttachments(): Attachments | undefined {
    return nonEmptyAttachments(this.#responseAttachments);
  }
}

const port = parentPort!;
const data = workerData as ThreadData;
const post = (message: FromThread): void => port.postMessage(message);

async function load(): Promise<Record<string, (...args: unknown[]) => unknown> | string> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(data.module)) as Record<string, unknown>;
  } catch (error) {
    return `cannot load ${data.module}: ${(error as Error)?.message ?? String(error)}`;
  }
  const implementation = loaded[data.exportName];
  if (typeof implementation !== 'object' || implementation === null) {
    const exports = Object.keys(loaded).join(', ') || 'none';
    return `${data.module} has no export "${data.exportName}" holding the implementation of ${data.service} (its exports: ${exports}); set executor.export`;
  }
  const missing = data.methods.filter(
    (name) => typeof (implementation as Record<string, unknown>)[name] !== 'function',
  );
  if (missing.length > 0) {
    return `the export "${data.exportName}" of ${data.module} lacks ${missing.join(', ')} of ${data.service}`;
  }
  return implementation as Record<string, (...args: unknown[]) => unknown>;
}

const implementation = await load();
if (typeof implementation === 'string') {
  post({ t: 'load-error', message: implementation });
} else {
  const running = new IdTable<ThreadInvocation>();
  const finish = (id: number, invocation: ThreadInvocation, error: unknown, value: unknown): void => {
    running.delete(id);
    const attachments = invocation.answerAttachments;
    if (error !== undefined) {
      post({ t: 'fail', id, error: recordThrown(error), attachments });
      return;
    }
    try {
      post({ t: 'done', id, value, attachments });
    } catch (cloneError) {
      const message = `${data.service}.${invocation.method}: its result cannot be sent from the worker thread: ${(cloneError as Error).message}`;
      post({ t: 'fail', id, error: recordThrown(new RpcError('Internal', message)), attachments });
    }
  };
  port.on('message', (message: ToThread) => {
    if (message.t === 'cancel') {
      running.get(message.id)?.abort(new RpcError(message.code, message.message));
      return;
    }
    const { id } = message;
    const invocation = new ThreadInvocation(message);
    running.set(id, invocation);
    const fn = implementation[message.method]!;
    let result: unknown;
    try {
      result = runInCallContext(invocation, () => fn.apply(implementation, message.args));
    } catch (error) {
      finish(id, invocation, error ?? new Error('undefined thrown'), undefined);
      return;
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') {
      finish(id, invocation, undefined, result);
      return;
    }
    (result as PromiseLike<unknown>).then(
      (value) => finish(id, invocation, undefined, value),
      (error: unknown) => finish(id, invocation, error ?? new Error('undefined thrown'), undefined),
    );
  });
  post({ t: 'ready' });
}

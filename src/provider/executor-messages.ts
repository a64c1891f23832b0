/**
 * What the app's loop and its worker threads tell each other (structured clone over the thread's
 * port), and how a handler's error crosses: as a plain record (`ThrownRecord`) the loop turns back into
 * an error of the same name and fields, of the service's declared class when it declares one, so that
 * errors are shaped for the caller exactly as on the loop (core/error-payload.ts).
 */
import { type ErrorDeclaration, isSystemError } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import { type ErrorCodeName, RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';

/** What a thread is given when it starts. */
export interface ThreadData {
  readonly module: string;
  readonly exportName: string;
  /** The methods it must find on the export. */
  readonly methods: readonly string[];
  /** For messages: the service's name. */
  readonly service: string;
}

/** One call sent to a thread (loop -> thread). */
export interface ThreadCall {
  readonly t: 'call';
  readonly id: number;
  readonly service: ServiceKey;
  readonly method: string;
  readonly args: unknown[];
  readonly attachments: Attachments;
  readonly deadline: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  readonly remoteAddress: string | undefined;
}

/** Loop -> thread. */
export type ToThread =
  | ThreadCall
  | { readonly t: 'cancel'; readonly id: number; readonly code: ErrorCodeName; readonly message: string };

/** Thread -> loop. */
export type FromThread =
  | { readonly t: 'ready' }
  | { readonly t: 'load-error'; readonly message: string }
  | { readonly t: 'done'; readonly id: number; readonly value: unknown; readonly attachments?: Attachments }
  | {
      readonly t: 'fail';
      readonly id: number;
      readonly error: ThrownRecord;
      readonly attachments?: Attachments;
    };

/** Something a handler threw, as it crosses to the loop. */
export type ThrownRecord =
  | {
      readonly kind: 'rpc';
      readonly code: ErrorCodeName;
      readonly message: string;
      readonly remoteName: string | undefined;
      readonly details: Record<string, unknown>;
      /** A system error is in its cause chain (the loop scrubs it as it would its own). */
      readonly systemCause: boolean;
    }
  | {
      readonly kind: 'error';
      readonly name: string;
      readonly message: string;
      readonly stack: string | undefined;
      /** Its own enumerable fields that can be cloned. */
      readonly fields: Record<string, unknown>;
    }
  | { readonly kind: 'value'; readonly text: string };

/** What can be cloned of `value`'s own fields (a field that cannot is left out). */
function cloneableFields(error: object): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(error)) {
    if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
    const value = (error as Record<string, unknown>)[key];
    try {
      fields[key] = structuredClone(value);
    } catch {
      // a function, a class instance with a port...: not sent
    }
  }
  return fields;
}

function causedBySystemError(error: Error): boolean {
  let cause: unknown = error.cause;
  for (let i = 0; i < 8 && cause !== undefined && cause !== null; i++) {
    if (isSystemError(cause)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** In the thread: a handler's thrown value as a record that crosses. */
export function recordThrown(error: unknown): ThrownRecord {
  if (RpcError.is(error)) {
    return {
      kind: 'rpc',
      code: error.code,
      message: error.message,
      remoteName: error.remoteName,
      details: cloneableFields(error.details),
      systemCause: causedBySystemError(error),
    };
  }
  if (error instanceof Error) {
    return {
      kind: 'error',
      name: error.name,
      message: error.message,
      stack: error.stack,
      fields: cloneableFields(error),
    };
  }
  return { kind: 'value', text: String(error) };
}

/**
 * On the loop: the error a record stands for. A name the service declares (by class or by name)
 * becomes an instance of that class (so `instanceof` and the declared-error rules hold), with the
 * message, stack and fields the thread saw.
 */
export function rebuildThrown(record: ThrownRecord, declared: readonly ErrorDeclaration[]): unknown {
  if (record.kind === 'rpc') {
    // a system error's own fields stay in the thread: a stand-in keeps the error scrubbed on the loop
    const cause = record.systemCause
      ? Object.assign(new Error('a system error in a worker thread'), { syscall: 'worker' })
      : undefined;
    return new RpcError(record.code, record.message, {
      remoteName: record.remoteName,
      details: record.details,
      cause,
    });
  }
  if (record.kind === 'value') return record.text;
  const declaration = declared.find((entry) =>
    typeof entry === 'string' ? entry === record.name : entry.name === record.name,
  );
  const error: Error =
    declaration !== undefined && typeof declaration !== 'string'
      ? (Object.create(declaration.prototype) as Error)
      : new Error(record.message);
  Object.defineProperty(error, 'message', { value: record.message, writable: true, configurable: true });
  if (error.name !== record.name) {
    Object.defineProperty(error, 'name', { value: record.name, writable: true, configurable: true });
  }
  Object.defineProperty(error, 'stack', { value: record.stack, writable: true, configurable: true });
  Object.assign(error, record.fields);
  return error;
}

/**
 * How errors travel: a failed response carries the error code in the status byte and this payload in
 * the body, encoded with the call's serializer.
 *
 * What a handler's error tells the caller (docs/errors.md):
 * - an `RpcError` travels as it is (code, message, details) — unless it wraps a system error;
 * - an error the service declares as its own (`defineService(..., { errors: [...] })`) travels with
 *   its name, message and own fields: a business error (`ProviderError`);
 * - a system error (fs, net, dns: errno-style fields such as `errno`, `syscall`, `path`, `address`) is
 *   scrubbed: the caller gets a `ProviderError` saying that the provider failed and a reference; the
 *   provider logs the whole error under that reference;
 * - any other error travels with its name and message only.
 * With `exposeErrors: 'all'` (trusted setups) every error travels with all its own fields, as thrown.
 */
import { ErrorCode, type ErrorCodeName, errorCodeName, RpcError, rpcErrorWithoutStack } from './rpc-error.js';

export interface ErrorPayload {
  name: string;
  message: string;
  /** Own enumerable fields of the thrown error (JSON-able values, as the serializer allows). */
  details: Record<string, unknown>;
  stack?: string;
}

/** An error a service declares as its own business error: its class, or its `name`. */
// biome-ignore lint/suspicious/noExplicitAny: any constructor signature
export type ErrorDeclaration = (abstract new (...args: any[]) => Error) | string;

/** How much a provider tells callers about errors. */
export type ErrorExposure = 'declared' | 'all';

export interface ErrorPayloadOptions {
  /** Send the provider's stack (server.exposeStack). */
  readonly exposeStack: boolean;
  /** 'declared' (default) or 'all' (server.exposeErrors). */
  readonly exposure: ErrorExposure;
  /** The service's declared business errors. */
  readonly declared: readonly ErrorDeclaration[];
  /** For the scrubbed message: what failed (`service.method`). */
  readonly label?: string;
}

export interface ErrorPayloadResult {
  status: number;
  payload: ErrorPayload;
  /** Set when a system error was replaced: log `error` on the provider under `ref`. */
  scrubbed?: { ref: string; error: Error };
}

const SKIPPED_FIELDS = new Set(['name', 'message', 'stack', 'cause']);
const NO_DETAILS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

function ownFields(error: object): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const key of Object.keys(error)) {
    if (SKIPPED_FIELDS.has(key)) continue;
    const value = (error as Record<string, unknown>)[key];
    if (typeof value === 'function' || typeof value === 'symbol') continue;
    details[key] = value;
  }
  return details;
}

const ERRNO_CODE = /^E[A-Z0-9_]+$/;

/** The errno-style fields of a Node system error (declared here so the public types need no @types/node). */
export interface SystemErrorFields extends Error {
  errno?: number;
  code?: string;
  syscall?: string;
  path?: string;
}

/**
 * A Node system error (fs, net, dns, child processes): errno-style own fields. Their messages and
 * fields name paths, addresses and ports of the provider's machine.
 */
export function isSystemError(error: unknown): error is SystemErrorFields {
  if (!(error instanceof Error)) return false;
  const fields = error as SystemErrorFields & { address?: unknown; port?: unknown; hostname?: unknown };
  if (typeof fields.errno === 'number' || typeof fields.syscall === 'string') return true;
  return (
    typeof fields.code === 'string' &&
    ERRNO_CODE.test(fields.code) &&
    (fields.path !== undefined ||
      fields.address !== undefined ||
      fields.port !== undefined ||
      fields.hostname !== undefined ||
      error instanceof AggregateError)
  );
}

/** A system error somewhere in `error`'s cause chain (bounded walk). */
function causedBySystemError(error: Error): boolean {
  let cause: unknown = error.cause;
  for (let i = 0; i < 8 && cause !== undefined && cause !== null; i++) {
    if (isSystemError(cause)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether `error` is one of the `declared` business errors (by class, or by name). */
export function isDeclaredError(error: Error, declared: readonly ErrorDeclaration[]): boolean {
  for (const declaration of declared) {
    if (typeof declaration === 'string' ? error.name === declaration : error instanceof declaration)
      return true;
  }
  return false;
}

let refCounter = 0;
const refPrefix = process.pid.toString(36);

/** A reference unique in this process, quoted to the caller and in the provider's log line. */
function nextRef(): string {
  refCounter = (refCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${refPrefix}-${refCounter.toString(36)}`;
}

const references = new WeakMap<object, string>();

/** The reference of `error`: made once, the same however often it is asked for. */
export function referenceOf(error: Error): string {
  let ref = references.get(error);
  if (ref === undefined) {
    ref = nextRef();
    references.set(error, ref);
  }
  return ref;
}

/**
 * The reference `error` was quoted to its caller under (and logged under, by the provider), if it was
 * given one; for an error a provider sent, the reference its message quotes.
 */
export function knownReference(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const ref = references.get(error);
  if (ref !== undefined) return ref;
  const message = (error as { message?: unknown }).message;
  if (typeof message !== 'string') return undefined;
  return /\(a system error; details are in the provider's log under ref ([0-9a-z]+-[0-9a-z]+)\)/.exec(
    message,
  )?.[1];
}

function scrubbed(error: Error, options: ErrorPayloadOptions, status: number): ErrorPayloadResult {
  const ref = referenceOf(error);
  const what = options.label ? `${options.label} failed` : 'the call failed';
  return {
    status,
    payload: {
      name: 'Error',
      message: `${what} on the provider (a system error; details are in the provider's log under ref ${ref})`,
      details: NO_DETAILS,
    },
    scrubbed: { ref, error },
  };
}

const DEFAULT_OPTIONS: ErrorPayloadOptions = { exposeStack: false, exposure: 'declared', declared: [] };

/** The status byte and payload for anything thrown while serving a call. */
export function toErrorPayload(
  error: unknown,
  options: ErrorPayloadOptions = DEFAULT_OPTIONS,
): ErrorPayloadResult {
  const all = options.exposure === 'all';
  if (RpcError.is(error)) {
    // a code outside the set (plain JS, a cast) is Internal, never status 0 (a success)
    const status = error.status;
    if (!all && causedBySystemError(error)) return scrubbed(error, options, status);
    const payload: ErrorPayload = {
      name: error.remoteName ?? error.name,
      message: error.message,
      details: error.details,
    };
    if (options.exposeStack && error.stack) payload.stack = error.stack;
    return { status, payload };
  }
  if (error instanceof Error) {
    if (!all && isSystemError(error) && !isDeclaredError(error, options.declared)) {
      return scrubbed(error, options, ErrorCode.ProviderError);
    }
    const details = all || isDeclaredError(error, options.declared) ? ownFields(error) : NO_DETAILS;
    const payload: ErrorPayload = { name: error.name, message: error.message, details };
    if (options.exposeStack && error.stack) payload.stack = error.stack;
    return { status: ErrorCode.ProviderError, payload };
  }
  return {
    status: ErrorCode.ProviderError,
    payload: { name: 'Error', message: String(error), details: NO_DETAILS },
  };
}

/**
 * Rebuilds the caller-side error from a failed response. Without a local stack: here it would show the
 * frame decoder, not the caller (the provider's own stack, when it sends one, is `remoteStack`).
 */
export function fromErrorPayload(status: number, payload: unknown): RpcError {
  const code: ErrorCodeName = errorCodeName(status);
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Partial<ErrorPayload>;
  const message = typeof p.message === 'string' ? p.message : 'remote error';
  const error = rpcErrorWithoutStack(code, message, {
    remote: true,
    remoteName: typeof p.name === 'string' ? p.name : undefined,
    details: typeof p.details === 'object' && p.details !== null ? { ...p.details } : {},
    remoteStack: typeof p.stack === 'string' ? p.stack : undefined,
  });
  // A provider's business error keeps the name it was thrown with.
  if (code === 'ProviderError' && error.remoteName) error.name = error.remoteName;
  return error;
}

/**
 * How errors travel: a failed response carries the error code in the status byte and this payload in
 * the body, encoded with the call's serializer.
 */
import { ErrorCode, type ErrorCodeName, errorCodeName, RpcError } from './rpc-error.js';

export interface ErrorPayload {
  name: string;
  message: string;
  /** Own enumerable fields of the thrown error (JSON-able values, as the serializer allows). */
  details: Record<string, unknown>;
  stack?: string;
}

const SKIPPED_FIELDS = new Set(['name', 'message', 'stack', 'cause']);

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

/** The status byte and payload for anything thrown while serving a call. */
export function toErrorPayload(
  error: unknown,
  exposeStack: boolean,
): { status: number; payload: ErrorPayload } {
  if (RpcError.is(error)) {
    const payload: ErrorPayload = {
      name: error.remoteName ?? error.name,
      message: error.message,
      details: error.details,
    };
    if (exposeStack && error.stack) payload.stack = error.stack;
    return { status: ErrorCode[error.code], payload };
  }
  if (error instanceof Error) {
    const payload: ErrorPayload = { name: error.name, message: error.message, details: ownFields(error) };
    if (exposeStack && error.stack) payload.stack = error.stack;
    return { status: ErrorCode.ProviderError, payload };
  }
  return {
    status: ErrorCode.ProviderError,
    payload: { name: 'Error', message: String(error), details: {} },
  };
}

/** Rebuilds the caller-side error from a failed response. */
export function fromErrorPayload(status: number, payload: unknown): RpcError {
  const code: ErrorCodeName = errorCodeName(status);
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Partial<ErrorPayload>;
  const message = typeof p.message === 'string' ? p.message : 'remote error';
  const error = new RpcError(code, message, {
    remote: true,
    remoteName: typeof p.name === 'string' ? p.name : undefined,
    details: typeof p.details === 'object' && p.details !== null ? p.details : {},
    remoteStack: typeof p.stack === 'string' ? p.stack : undefined,
  });
  // A provider's business error keeps the name it was thrown with.
  if (code === 'ProviderError' && error.remoteName) error.name = error.remoteName;
  return error;
}

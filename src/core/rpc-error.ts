/**
 * The one error type of Callisto. Every failure a caller can see is an `RpcError` with a code from
 * the closed set below, a `remote` flag (true when the provider produced it) and an optional cause.
 */

/** Every code an `RpcError` can carry. The numeric value is the wire status byte. */
export const ErrorCode = {
  /** The call did not complete before its deadline. */
  Timeout: 1,
  /** The connection failed, closed, or could not be opened. */
  Network: 2,
  /** The provider does not expose the requested service (name, version, group). */
  ServiceNotFound: 3,
  /** The service exists but does not declare the requested method. */
  MethodNotFound: 4,
  /** The request was malformed or its arguments failed validation. */
  BadRequest: 5,
  /** A value could not be serialized or deserialized. */
  Serialization: 6,
  /** The service implementation threw: a business error, never retried. */
  ProviderError: 7,
  /** The peer is over a concurrency, queue or buffer limit. */
  Overloaded: 8,
  /** The caller is not authenticated or not allowed. */
  Unauthorized: 9,
  /** The caller exceeded a rate limit. */
  RateLimited: 10,
  /** The caller cancelled the call (AbortSignal) before it completed. */
  Cancelled: 11,
  /** No provider is available for the service. */
  NoProvider: 12,
  /** The provider is shutting down and no longer accepts calls. */
  Shutdown: 13,
  /** An unexpected failure inside Callisto itself. */
  Internal: 14,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

const codeNames = new Map<number, ErrorCodeName>(
  Object.entries(ErrorCode).map(([name, value]) => [value, name as ErrorCodeName]),
);

/** The symbolic name of a numeric code, or `Internal` for unknown values. */
export function errorCodeName(code: number): ErrorCodeName {
  return codeNames.get(code) ?? 'Internal';
}

/** Whether `code` is one of the known codes. */
export function isErrorCode(code: number): code is ErrorCodeValue {
  return codeNames.has(code);
}

const brand = Symbol.for('callisto.RpcError');

export interface RpcErrorInit {
  /** True when the error was produced by the remote side. Default false. */
  remote?: boolean;
  /** The underlying error. */
  cause?: unknown;
  /** The remote error's own `name` (for provider errors: the thrown error's class name). */
  remoteName?: string;
  /** Own enumerable fields of the original error, carried over the wire. */
  details?: Record<string, unknown>;
  /** The remote stack, only when the provider enables `exposeStack`. */
  remoteStack?: string;
  /** True when the request provably never reached a provider (connect refused, not written): safe to retry. */
  neverSent?: boolean;
}

export class RpcError extends Error {
  override name = 'RpcError';
  readonly code: ErrorCodeName;
  readonly remote: boolean;
  readonly remoteName: string | undefined;
  readonly details: Record<string, unknown>;
  readonly remoteStack: string | undefined;
  /** True when the request provably never reached a provider: any method may be retried elsewhere. */
  readonly neverSent: boolean;

  constructor(code: ErrorCodeName, message: string, init: RpcErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.remote = init.remote ?? false;
    this.remoteName = init.remoteName;
    this.details = init.details ?? {};
    this.remoteStack = init.remoteStack;
    this.neverSent = init.neverSent ?? false;
    Object.defineProperty(this, brand, { value: true });
  }

  /**
   * The numeric wire code; `Internal` for a code outside the set (an RpcError made from plain JS or a
   * cast), which would otherwise travel as status 0, a success.
   */
  get status(): ErrorCodeValue {
    return ErrorCode[this.code] ?? ErrorCode.Internal;
  }

  /** Brand check that works across copies of this module. */
  static is(value: unknown): value is RpcError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** Wraps anything thrown into an RpcError, keeping RpcErrors as they are. */
  static from(value: unknown, code: ErrorCodeName = 'Internal'): RpcError {
    if (RpcError.is(value)) return value;
    return new RpcError(code, messageOf(value), { cause: value });
  }
}

/**
 * An RpcError without a stack trace, for the errors made by the thousand when a process is overloaded
 * (a call shed, an error answer decoded from the wire), whose stack would show only the framework's own
 * frames (a filter, the frame decoder), never the caller's: capturing it cost about 8 µs of the refusal
 * path, 1 µs without (docs/performance.md).
 */
export function rpcErrorWithoutStack(
  code: ErrorCodeName,
  message: string,
  init: RpcErrorInit = {},
): RpcError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RpcError(code, message, init);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The message of anything thrown: an Error's message, else its string form. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The logging interface Callisto writes to. Each method takes a message and, for lines about one call,
 * structured fields (`callId`, `traceId`, `service`, `method`, `remote`, …). Pass a pino logger through
 * `pinoLogger(pino)` (pino takes the fields first), or anything with these four methods: a logger that
 * ignores the second argument still gets every message.
 */
import { traceIdOfCall } from './trace-context.js';

export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** ` key=value` for each defined field (values with spaces quoted). */
export function formatFields(fields: LogFields | undefined): string {
  if (fields === undefined) return '';
  let out = '';
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = String(value);
    out += ` ${key}=${/[\s"=]/.test(text) ? JSON.stringify(text) : text}`;
  }
  return out;
}

/** A logger writing `[callisto] level: message key=value…` lines to stderr at or above `level`. */
export function createConsoleLogger(level: LogLevel, name = 'callisto'): Logger {
  const write = (at: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[at] >= RANK[level]) process.stderr.write(`[${name}] ${at}: ${message}${formatFields(fields)}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** What `pinoLogger` needs of a pino logger (its log methods take an object of fields first). */
export interface PinoLike {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * A pino logger (or a child of one) as Callisto's logger: each line becomes one JSON record with the
 * message as `msg` and the call's fields (`traceId`, `service`, `method`, …) as properties.
 */
export function pinoLogger(pino: PinoLike): Logger {
  const NONE = {};
  return {
    debug: (message, fields) => pino.debug(fields ?? NONE, message),
    info: (message, fields) => pino.info(fields ?? NONE, message),
    warn: (message, fields) => pino.warn(fields ?? NONE, message),
    error: (message, fields) => pino.error(fields ?? NONE, message),
  };
}

/**
 * The fields of a line about one call: `call` (`Service.method`), its `callId` (the same on both sides)
 * and its `traceId`: the W3C `traceparent`'s when the call carries one, else the one derived from its
 * call id (observability/trace-context.ts), so every line about a call names its trace, SDK or not.
 */
export function callLogFields(
  call: string,
  invocation: {
    readonly callId?: string | undefined;
    readonly attachments?: Readonly<Record<string, string>>;
  },
): LogFields {
  return { call, callId: invocation.callId, traceId: traceIdOf(invocation.attachments, invocation.callId) };
}

/** The trace id of a call: its W3C `traceparent` attachment's, else the one derived from `callId`. */
export function traceIdOf(
  attachments: Readonly<Record<string, string>> | undefined,
  callId?: string | undefined,
): string | undefined {
  return traceIdOfCall(attachments, callId);
}

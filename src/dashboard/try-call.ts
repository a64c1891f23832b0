/**
 * "Try it": one real call from the page, made as `callisto call` makes it (a reference built from the
 * service name, one attempt, the app's registries), with the arguments as a JSON array in the tagged
 * form of the command line and the HTTP entry (`{"$t":"D","v":…}`, `{"$t":"n","v":"…"}`, docs/values.md), and the result or error in the same form.
 */

import { parseCallTarget } from '../cli/call-target.js';
import { CliError } from '../cli/exit-codes.js';
import { fromView, toView, ViewError } from '../cli/json-view.js';
import { type RemoteMethod, remoteMethod } from '../cli/remote-method.js';
import { rpcErrorData } from '../cli/rpc-failure.js';
import { type CallistoApp, RpcError } from '../index.js';
import { MAX_CALL_TIMEOUT_MS } from './dashboard-options.js';

export interface TryRequest {
  readonly service: string;
  readonly method: string;
  readonly version: string;
  readonly group: string;
  /** The arguments as the page's text: a JSON array. */
  readonly args: string;
  readonly timeoutMs?: number;
}

export type TryAnswer =
  | { readonly ok: true; readonly result: unknown; readonly elapsedMs: number }
  | { readonly ok: false; readonly error: Record<string, unknown>; readonly elapsedMs: number };

/** A request the page should not have sent as it is: the message says what to fix. */
export class TryInputError extends Error {
  override name = 'TryInputError';
}

/** References kept for calls from the page (one per service key, method and timeout). */
const MAX_METHODS = 256;

export interface TryCaller {
  call(request: unknown): Promise<TryAnswer>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The request checked: every mistake is a TryInputError naming the field. */
export function checkTryRequest(body: unknown, defaultTimeoutMs: number): TryRequest & { timeoutMs: number } {
  if (!isRecord(body)) throw new TryInputError('the request is not a JSON object');
  const text = (field: string, fallback?: string): string => {
    const value = body[field] ?? fallback;
    if (typeof value !== 'string') throw new TryInputError(`"${field}" must be a string`);
    if (value.length > 1000) throw new TryInputError(`"${field}" is longer than 1000 characters`);
    return value;
  };
  const service = text('service');
  const method = text('method');
  try {
    parseCallTarget(`${service}.${method}`);
  } catch (error) {
    if (error instanceof CliError)
      throw new TryInputError(`"${service}.${method}" is not a service and method name`);
    throw error;
  }
  const timeout = body['timeoutMs'] ?? defaultTimeoutMs;
  if (
    typeof timeout !== 'number' ||
    !Number.isInteger(timeout) ||
    timeout < 1 ||
    timeout > MAX_CALL_TIMEOUT_MS
  ) {
    throw new TryInputError(`"timeoutMs" must be an integer from 1 to ${MAX_CALL_TIMEOUT_MS}`);
  }
  const args = body['args'];
  if (typeof args !== 'string') throw new TryInputError('"args" must be the arguments as JSON text');
  return {
    service,
    method,
    version: text('version', '1.0.0'),
    group: text('group', ''),
    args,
    timeoutMs: timeout,
  };
}

/** The arguments text as values: a JSON array, each element in the tagged form. */
export function parseTryArguments(text: string): unknown[] {
  const trimmed = text.trim();
  let data: unknown;
  try {
    data = trimmed === '' ? [] : JSON.parse(trimmed);
  } catch (error) {
    throw new TryInputError(`the arguments are not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(data)) {
    throw new TryInputError(
      'the arguments must be a JSON array, one element per argument: [7] or ["Ann", 3]',
    );
  }
  try {
    return data.map((item) => fromView(item));
  } catch (error) {
    if (error instanceof ViewError) throw new TryInputError(`the arguments: ${error.message}`);
    throw error;
  }
}

export function createTryCaller(app: CallistoApp, defaultTimeoutMs: number): TryCaller {
  const methods = new Map<string, RemoteMethod>();
  const methodFor = (request: TryRequest & { timeoutMs: number }): RemoteMethod => {
    const id = JSON.stringify([
      request.service,
      request.version,
      request.group,
      request.method,
      request.timeoutMs,
    ]);
    let method = methods.get(id);
    if (!method) {
      method = remoteMethod(
        app,
        { service: request.service, method: request.method },
        { version: request.version, group: request.group, timeoutMs: request.timeoutMs },
        { oneAttempt: true },
      );
      if (methods.size >= MAX_METHODS) methods.delete(methods.keys().next().value!);
      methods.set(id, method);
    }
    return method;
  };
  return {
    async call(body) {
      const request = checkTryRequest(body, defaultTimeoutMs);
      const args = parseTryArguments(request.args);
      let method: RemoteMethod;
      try {
        method = methodFor(request);
      } catch (error) {
        if (error instanceof CliError) throw new TryInputError(error.message);
        throw error;
      }
      const started = performance.now();
      try {
        const result = await method(args);
        return { ok: true, result: toView(result), elapsedMs: performance.now() - started };
      } catch (error) {
        const elapsedMs = performance.now() - started;
        if (RpcError.is(error))
          return { ok: false, error: toView(rpcErrorData(error)) as Record<string, unknown>, elapsedMs };
        return { ok: false, error: { code: 'Unknown', message: (error as Error).message }, elapsedMs };
      }
    },
  };
}

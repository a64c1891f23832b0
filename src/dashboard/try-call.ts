/**
 * "Try it": one real call from the page, made as `callisto call` makes it (a reference built from the
 * service name, one attempt, the app's registries), with the arguments as a JSON array in the tagged
 * form of the command line and the HTTP entry (`{"$t":"D","v":…}`, `{"$t":"n","v":"…"}`, docs/values.md), and the result or error in the same form.
 *
 * `$echo` is offered for every service: the provider's echo, answered through its filters (docs/cluster.md).
 *
 * Whatever the page asks, Try it holds at most `MAX_TRY_REFERENCES` references (the least recently
 * used one is released, after its calls end) and writes no consumer record in the registries.
 */

import { type CallistoApp, defineService, echo, RpcError, releaseReference } from '../index.js';
import { ECHO_METHOD } from '../internal.js';
import { parseCallTarget } from '../tools/call-target.js';
import { CliError } from '../tools/exit-codes.js';
import { fromView, toView, ViewError } from '../tools/json-view.js';
import { rpcErrorData } from '../tools/rpc-failure.js';
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

/** References kept for calls from the page (one per service key and timeout), least recently used out. */
export const MAX_TRY_REFERENCES = 32;

export interface TryCaller {
  call(request: unknown): Promise<TryAnswer>;
  /** References held now (at most MAX_TRY_REFERENCES). */
  readonly references: number;
  /** Releases every reference. */
  close(): Promise<void>;
}

type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

interface Held {
  readonly reference: Methods;
  calls: number;
  evicted: boolean;
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
  // Map order is use order: the first entry is the least recently used.
  const held = new Map<string, Held>();
  const releasing = new Set<Promise<void>>();
  const release = (entry: Held) => {
    const done = releaseReference(entry.reference).finally(() => releasing.delete(done));
    releasing.add(done);
  };
  const referenceFor = (request: TryRequest & { timeoutMs: number }): Held => {
    const id = JSON.stringify([request.service, request.version, request.group, request.timeoutMs]);
    let entry = held.get(id);
    if (entry !== undefined) {
      held.delete(id);
      held.set(id, entry);
      return entry;
    }
    const definition = defineService<Methods>(request.service, {
      version: request.version,
      group: request.group,
    });
    entry = {
      reference: app.refer(definition, {
        timeoutMs: request.timeoutMs,
        cluster: 'failfast',
        registerConsumer: false,
      }) as Methods,
      calls: 0,
      evicted: false,
    };
    held.set(id, entry);
    while (held.size > MAX_TRY_REFERENCES) {
      const [oldId, old] = held.entries().next().value!;
      held.delete(oldId);
      old.evicted = true;
      if (old.calls === 0) release(old);
    }
    return entry;
  };
  return {
    get references() {
      return held.size;
    },
    async call(body) {
      const request = checkTryRequest(body, defaultTimeoutMs);
      const args = parseTryArguments(request.args);
      if (app.config.registry.length === 0) {
        throw new TryInputError('Try it calls through the registries, and the dashboard has none');
      }
      const entry = referenceFor(request);
      // every provided service answers `$echo` through its filters (auth, access rules), not its code
      const method =
        request.method === ECHO_METHOD
          ? (...values: unknown[]) => echo(entry.reference, values[0] ?? 'echo')
          : entry.reference[request.method];
      if (typeof method !== 'function') {
        throw new TryInputError(`${request.method} cannot be called remotely (a reserved name)`);
      }
      entry.calls++;
      const started = performance.now();
      try {
        const result = await method(...args);
        return { ok: true, result: toView(result), elapsedMs: performance.now() - started };
      } catch (error) {
        const elapsedMs = performance.now() - started;
        if (RpcError.is(error))
          return { ok: false, error: toView(rpcErrorData(error)) as Record<string, unknown>, elapsedMs };
        return { ok: false, error: { code: 'Unknown', message: (error as Error).message }, elapsedMs };
      } finally {
        entry.calls--;
        if (entry.evicted && entry.calls === 0) release(entry);
      }
    },
    async close() {
      for (const entry of held.values()) release(entry);
      held.clear();
      await Promise.allSettled([...releasing]);
    },
  };
}

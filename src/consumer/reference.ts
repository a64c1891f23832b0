/**
 * The typed consumer proxy. Each method's runtime (its route, timeout, flags and the invoker behind it:
 * the per-call filters and the cluster) is built once, by the consumer (method-calls.ts); a call
 * allocates one invocation and hands it over. Definitions that declare methods give a plain object;
 * those that do not give a Proxy that answers `undefined` for `then` (so a reference is never mistaken
 * for a promise) and for symbols.
 */
import { ConfigError } from '../core/config-error.js';
import type { Attachments, Invoker } from '../core/invocation.js';
import { servedCall } from '../core/served-call.js';
import { CALL_PRIORITIES, isCallPriority, PRIORITY_ATTACHMENT } from '../governance/call-priority.js';
import { ROUTING_TAG_ATTACHMENT } from '../routing/route-rule.js';
import type { ServiceDefinition, StreamKind } from '../service/define-service.js';
import { isForbiddenMethodName } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import { ClientInvocation, type ClientInvocationInit } from './client-invocation.js';
import { ClientStream } from './client-stream.js';
import { type HopPolicy, inherit } from './hop-context.js';
import type { MethodRoute } from './method-route.js';
import type { CallOptions, ReferenceOptions } from './reference-options.js';
import { releaseKey } from './release-reference.js';
import { callOptionsKey, type WithOptionsFactory } from './with-options.js';

/** Everything a method needs per call, computed once. */
export interface MethodRuntime {
  readonly name: string;
  readonly route: MethodRoute;
  readonly timeoutMs: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  /** The method's stream kind (`stream` in its declaration); undefined for a unary method. */
  readonly stream?: StreamKind | undefined;
  /** The per-call chain and, behind it, the cluster. */
  readonly invoke: Invoker;
  /** The names of the method's filters in running order, per position (docs, tests, admin). */
  readonly filters: { readonly call: readonly string[]; readonly attempt: readonly string[] };
  /** What its calls inherit from the call being served (consumer/hop-context.ts); undefined: nothing. */
  readonly hops?: HopPolicy | undefined;
}

/** What the consumer supplies to build a reference. */
export interface ReferenceParts<T> {
  definition: ServiceDefinition<T>;
  options: ReferenceOptions<T>;
  /** Builds the runtime of one method (on its first use). */
  method(name: string): MethodRuntime;
  /** Lets go of what the reference holds (releaseReference); its calls are refused afterwards. */
  release?(): Promise<void>;
}

const NO_ATTACHMENTS: Attachments = Object.freeze({}) as Attachments;

/**
 * A call's invocation: made from `init` as it is outside a provider method; inside one, with what it
 * inherits from the call being served (consumer/hop-context.ts).
 */
function invocationOf(init: ClientInvocationInit, hops: HopPolicy | undefined): ClientInvocation {
  const served = hops === undefined ? undefined : servedCall();
  if (served === undefined) return new ClientInvocation(init);
  return new ClientInvocation({ ...init, ...inherit(served, init, hops!) });
}
const runtimeKey = Symbol('callisto.methodRuntime');
/** A reference's calls of a method by name (`$echo`, consumer/echo.ts), through its filters. */
const callKey = Symbol('callisto.callMethod');

function callFunction<T>(
  parts: ReferenceParts<T>,
  runtime: MethodRuntime,
  callOptions: CallOptions | undefined,
): (...args: unknown[]) => Promise<unknown> {
  const base = parts.options.attachments;
  let extra =
    callOptions?.credentials === undefined
      ? callOptions?.attachments
      : { ...callOptions.attachments, authorization: `Bearer ${callOptions.credentials}` };
  const priority = callOptions?.priority;
  if (priority !== undefined) {
    if (!isCallPriority(priority)) {
      throw new ConfigError('withOptions().priority', priority, `one of ${CALL_PRIORITIES.join(', ')}`);
    }
    extra = { ...extra, [PRIORITY_ATTACHMENT]: priority };
  }
  const tag = callOptions?.tag;
  if (tag !== undefined) {
    if (typeof tag !== 'string' || tag === '' || tag.length > 128) {
      throw new ConfigError('withOptions().tag', tag, 'a routing tag: 1 to 128 characters');
    }
    extra = { ...extra, [ROUTING_TAG_ATTACHMENT]: tag };
  }
  const attachments = base || extra ? Object.freeze({ ...base, ...extra }) : NO_ATTACHMENTS;
  const timeoutMs = callOptions?.timeoutMs ?? runtime.timeoutMs;
  const signal = callOptions?.signal;
  const { route, oneway, idempotent, invoke, hops } = runtime;
  if (runtime.stream !== undefined) {
    return streamCallFunction({ runtime, attachments, timeoutMs, signal }) as (
      ...args: unknown[]
    ) => Promise<unknown>;
  }
  if (callOptions?.cache === false) {
    return (...args) => {
      try {
        return invoke(
          invocationOf(
            { route, args, attachments, timeoutMs, signal, oneway, idempotent, noCache: true },
            hops,
          ),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return (...args) => {
    try {
      return invoke(invocationOf({ route, args, attachments, timeoutMs, signal, oneway, idempotent }, hops));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** What a stream method's calls are made with. */
interface StreamCallInit {
  readonly runtime: MethodRuntime;
  readonly attachments: Attachments;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * A stream method's function: a client stream answers a Promise; a server or two-way stream returns an
 * AsyncIterable at once, and each iteration of it opens a stream (its first `next()` is sent when the
 * iteration starts). The stream argument (the last one) travels as null in the opening's arguments.
 */
function streamCallFunction(init: StreamCallInit): (...args: unknown[]) => unknown {
  const { runtime, attachments, timeoutMs, signal } = init;
  const { route, invoke } = runtime;
  const kind = runtime.stream!;
  const open = (args: unknown[]): { stream: ClientStream; result: Promise<unknown> } => {
    let input: AsyncIterable<unknown> | undefined;
    let sent = args;
    if (kind !== 'server') {
      input = args[args.length - 1] as AsyncIterable<unknown>;
      if (typeof input?.[Symbol.asyncIterator] !== 'function') {
        throw new TypeError(`${route.label}: its last argument must be an AsyncIterable (a ${kind} stream)`);
      }
      sent = args.slice(0, -1);
      sent.push(null);
    }
    const stream = new ClientStream(kind, input, signal);
    const result = invoke(
      invocationOf(
        {
          route,
          args: sent,
          attachments,
          timeoutMs,
          signal: stream.signal,
          oneway: false,
          idempotent: false,
          stream,
        },
        runtime.hops,
      ),
    );
    if (stream.inbox !== undefined) {
      const inbox = stream.inbox;
      result.then(
        () => inbox.end(),
        (error: unknown) => inbox.fail(error),
      );
    }
    return { stream, result };
  };
  if (kind === 'client') {
    return (...args) => {
      try {
        return open(args).result;
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  return (...args) => ({
    [Symbol.asyncIterator]: () => open(args).stream.inbox!,
  });
}

/** Builds the typed reference. */
export function createReference<T>(parts: ReferenceParts<T>): Remote<T> {
  const runtimes = new Map<string, MethodRuntime>();
  const runtimeOf = (method: string): MethodRuntime => {
    let runtime = runtimes.get(method);
    if (runtime === undefined) {
      runtime = parts.method(method);
      runtimes.set(method, runtime);
    }
    return runtime;
  };
  const declared = parts.definition.methods ? Object.keys(parts.definition.methods) : undefined;

  const view = (callOptions: CallOptions | undefined): Remote<T> => {
    const callOf = (method: string) => callFunction(parts, runtimeOf(method), callOptions);
    let target: Record<string | symbol, unknown>;
    if (declared) {
      target = {};
      for (const method of declared) target[method] = callFunction(parts, runtimeOf(method), callOptions);
    } else {
      const cache = new Map<string, unknown>();
      target = new Proxy(
        {},
        {
          get(_target, property) {
            if (property === callOptionsKey) return factory;
            if (property === runtimeKey) return runtimeOf;
            if (property === callKey) return callOf;
            if (property === releaseKey) return release;
            if (typeof property === 'symbol' || property === 'then' || isForbiddenMethodName(property)) {
              return undefined;
            }
            let fn = cache.get(property);
            if (fn === undefined) {
              fn = callFunction(parts, runtimeOf(property), callOptions);
              cache.set(property, fn);
            }
            return fn;
          },
        },
      ) as Record<string | symbol, unknown>;
    }
    if (declared) {
      Object.defineProperty(target, callOptionsKey, { value: factory });
      Object.defineProperty(target, runtimeKey, { value: runtimeOf });
      Object.defineProperty(target, callKey, { value: callOf });
      Object.defineProperty(target, releaseKey, { value: release });
    }
    let remote = target as Remote<T>;
    if (parts.options.stub) {
      const stubbed = parts.options.stub(remote) as Record<string, unknown>;
      if (declared) {
        remote = Object.assign({}, target, stubbed) as Remote<T>;
        Object.defineProperty(remote, callOptionsKey, { value: factory });
        Object.defineProperty(remote, runtimeKey, { value: runtimeOf });
        Object.defineProperty(remote, callKey, { value: callOf });
        Object.defineProperty(remote, releaseKey, { value: release });
      } else {
        const inner = target;
        remote = new Proxy(
          {},
          {
            get: (_t, property) =>
              typeof property === 'string' && Object.hasOwn(stubbed, property)
                ? stubbed[property]
                : inner[property],
          },
        ) as Remote<T>;
      }
    }
    return Object.freeze(remote);
  };
  const factory: WithOptionsFactory<T> = (callOptions) => view(callOptions);
  const release = () => parts.release?.() ?? Promise.resolve();
  return view(undefined);
}

/** @internal The runtime of `method` on a reference made by app.refer() (its filters, for tests). */
export function methodRuntimeOf(reference: object, method: string): MethodRuntime {
  const runtimeOf = (reference as Record<symbol, ((method: string) => MethodRuntime) | undefined>)[
    runtimeKey
  ];
  if (runtimeOf === undefined) throw new TypeError('methodRuntimeOf() needs a reference made by app.refer()');
  return runtimeOf(method);
}

/** @internal Calls `method` on a reference made by app.refer(), through its filters (consumer/echo.ts). */
export function callMethodOf(reference: object, method: string, args: unknown[]): Promise<unknown> {
  const callOf = (
    reference as Record<symbol, ((method: string) => (...args: unknown[]) => Promise<unknown>) | undefined>
  )[callKey];
  if (callOf === undefined)
    return Promise.reject(new TypeError('echo() needs a reference made by app.refer()'));
  return callOf(method)(...args);
}

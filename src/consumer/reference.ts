/**
 * The typed consumer proxy. Each method precomputes what it can (wire route, timeout, flags, the
 * composed invoker) so that a call allocates one invocation and little else. Definitions that declare
 * methods give a plain object; those that do not give a Proxy that answers `undefined` for `then` (so a
 * reference is never mistaken for a promise) and for symbols.
 */
import { type Attachments, composeFilters, type Invoker } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { encodeRoutePrefix } from '../protocol/metadata.js';
import type { Serializer } from '../serialization/serializer.js';
import type { MethodDeclaration, ServiceDefinition } from '../service/define-service.js';
import { isForbiddenMethodName } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import type { MethodRoute } from './client-connection.js';
import { ClientInvocation } from './client-invocation.js';
import type { CallOptions, MethodReferenceOptions, ReferenceOptions } from './reference-options.js';

/** Everything a method needs per call, computed once. */
export interface MethodRuntime {
  readonly name: string;
  readonly route: MethodRoute;
  readonly timeoutMs: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  readonly invoke: Invoker;
}

/** What the app supplies to build the invoker behind each method. */
export interface ReferenceParts<T> {
  definition: ServiceDefinition<T>;
  options: ReferenceOptions<T>;
  /** Default timeout after per-method and reference overrides. */
  timeoutMs: number;
  serializer: Serializer;
  /** Builds the remote (or in-process) invoker of one method. */
  methodInvoker(
    method: string,
    methodOptions: MethodReferenceOptions,
    declaration: MethodDeclaration,
  ): Invoker;
}

const NO_ATTACHMENTS: Attachments = Object.freeze({}) as Attachments;
const callOptionsKey = Symbol('callisto.withOptions');

type WithOptionsFactory<T> = (options: CallOptions) => Remote<T>;

function mockInvoker<T>(parts: ReferenceParts<T>, method: string, declaration: MethodDeclaration): Invoker {
  const implementation = parts.options.mockImpl as Record<
    string,
    ((...args: unknown[]) => unknown) | undefined
  >;
  const fromImpl = implementation?.[method];
  const fromDeclaration = declaration.mock as ((...args: unknown[]) => unknown) | undefined;
  const answer = fromImpl
    ? (args: unknown[]) => fromImpl.apply(implementation, args)
    : fromDeclaration
      ? (args: unknown[]) => fromDeclaration(...args)
      : () => undefined;
  return async (invocation) => answer(invocation.args);
}

function buildMethod<T>(parts: ReferenceParts<T>, method: string): MethodRuntime {
  const { definition, options } = parts;
  const declaration: MethodDeclaration = definition.methods?.[method] ?? {};
  const methodOptions: MethodReferenceOptions =
    (options.methods as Record<string, MethodReferenceOptions> | undefined)?.[method] ?? {};
  const route: MethodRoute = {
    prefix: encodeRoutePrefix(definition.name, definition.version, definition.group, method),
    serializer: parts.serializer,
    label: `${definition.name}.${method}`,
  };
  const mode = options.mock === true ? 'force' : options.mock || undefined;
  let terminal: Invoker;
  if (mode === 'force') terminal = mockInvoker(parts, method, declaration);
  else {
    const remote = parts.methodInvoker(method, methodOptions, declaration);
    if (mode === 'fail') {
      const mock = mockInvoker(parts, method, declaration);
      terminal = async (invocation) => {
        try {
          return await remote(invocation);
        } catch (error) {
          if (RpcError.is(error) && error.code === 'ProviderError') throw error;
          return mock(invocation);
        }
      };
    } else terminal = remote;
  }
  return {
    name: method,
    route,
    timeoutMs: methodOptions.timeoutMs ?? declaration.timeoutMs ?? parts.timeoutMs,
    oneway: methodOptions.oneway ?? declaration.oneway ?? false,
    idempotent: methodOptions.idempotent ?? declaration.idempotent ?? false,
    invoke: composeFilters(options.filters ?? [], terminal),
  };
}

function callFunction<T>(
  parts: ReferenceParts<T>,
  runtime: MethodRuntime,
  callOptions: CallOptions | undefined,
): (...args: unknown[]) => Promise<unknown> {
  const base = parts.options.attachments;
  const extra = callOptions?.attachments;
  const attachments = base || extra ? Object.freeze({ ...base, ...extra }) : NO_ATTACHMENTS;
  const timeoutMs = callOptions?.timeoutMs ?? runtime.timeoutMs;
  const signal = callOptions?.signal;
  const { definition } = parts;
  return (...args) =>
    runtime.invoke(
      new ClientInvocation(
        definition,
        runtime.name,
        args,
        attachments,
        timeoutMs,
        signal,
        runtime.oneway,
        runtime.idempotent,
        runtime.route,
      ),
    );
}

/** Builds the typed reference. */
export function createReference<T>(parts: ReferenceParts<T>): Remote<T> {
  const runtimes = new Map<string, MethodRuntime>();
  const runtimeOf = (method: string): MethodRuntime => {
    let runtime = runtimes.get(method);
    if (runtime === undefined) {
      runtime = buildMethod(parts, method);
      runtimes.set(method, runtime);
    }
    return runtime;
  };
  const declared = parts.definition.methods ? Object.keys(parts.definition.methods) : undefined;

  const view = (callOptions: CallOptions | undefined): Remote<T> => {
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
    if (declared) Object.defineProperty(target, callOptionsKey, { value: factory });
    let remote = target as Remote<T>;
    if (parts.options.stub) {
      const stubbed = parts.options.stub(remote) as Record<string, unknown>;
      if (declared) {
        remote = Object.assign({}, target, stubbed) as Remote<T>;
        Object.defineProperty(remote, callOptionsKey, { value: factory });
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
  return view(undefined);
}

/**
 * The reference with per-call options, keeping its typed signature:
 * `await withOptions(users, { timeoutMs: 500, signal }).getUser(7)`.
 */
export function withOptions<R extends object>(reference: R, options: CallOptions): R {
  const factory = (reference as Record<symbol, WithOptionsFactory<unknown> | undefined>)[callOptionsKey];
  if (factory === undefined) throw new TypeError('withOptions() needs a reference made by app.refer()');
  return factory(options) as R;
}

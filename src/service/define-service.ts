/**
 * `defineService<T>(name, options)` — the contract both sides share. Service identity is
 * name + version (+ group).
 */

import { ConfigError } from '../core/config-error.js';
import { parseConfig } from '../core/describe-schema.js';
import { ECHO_METHOD } from '../core/echo.js';
import type { ErrorDeclaration } from '../core/error-payload.js';
import type { ServiceKey } from '../core/service-key.js';
import { checkCacheable, type ResultCacheOptions, resultCacheSchema } from '../governance/cache-options.js';
import { CALL_PRIORITIES, type CallPriority, isCallPriority } from '../governance/call-priority.js';
import { bindProtobuf, type ProtobufBinding, type ProtobufDeclaration } from '../serialization/protobuf.js';
import { hasSchemas, schemaBinding } from './proto/schema-binding.js';
import type { ArgumentsSchema, MethodNames, ResultSchema } from './service-types.js';

/** What every method declaration may say (see MethodDeclaration). */
export interface MethodDeclarationBase {
  /** Fire-and-forget: the consumer does not wait for a result. Default false. */
  oneway?: boolean;
  /** Default timeout of this method, ms. Default: the reference's. */
  timeoutMs?: number;
  /** Argument validation, run by the provider before the implementation (and by in-process calls). */
  args?: ArgumentsSchema;
  /**
   * What the method returns (a server stream: each message), as a schema with Standard JSON Schema (zod
   * 4.2+: `z.object({...})`; `z.void()` for nothing). Not checked at run time: it describes the result
   * to the HTTP entry's OpenAPI document and to `exportProto` (docs/schemas.md). Default none.
   */
  returns?: ResultSchema;
  /** The answer of this method when the reference is in mock mode and no mock implementation has it. */
  mock?: (...args: never[]) => unknown;
  /**
   * A streaming method (docs/streams.md): `'server'` returns an `AsyncIterable` of messages,
   * `'client'` takes an `AsyncIterable` as its last parameter and answers once, `'bidi'` both. Not
   * combined with `oneway`, `cache` or `mock`. Default none (a unary call).
   */
  stream?: StreamKind;
  /**
   * How much its calls matter when the provider is at its adaptive concurrency limit
   * (docs/operations.md, "Overload protection"): 'sheddable' calls are refused first (above 80% of the
   * limit), 'critical' ones may exceed it by half. A call's `callisto-priority` attachment
   * (`withOptions(ref, { priority })`) wins over it. Default 'default'.
   */
  priority?: CallPriority;
}

/** The kinds of streaming method. */
export type StreamKind = 'server' | 'client' | 'bidi';
const STREAM_KINDS: ReadonlySet<string> = new Set(['server', 'client', 'bidi']);

/**
 * How a method is declared. `idempotent: true` (may be executed more than once: retries and failover
 * apply; default false) is what allows `cache` (the consumers' result cache, docs/governance.md): a
 * cache on a method not declared idempotent does not compile, and is refused at run time too.
 */
export type MethodDeclaration = MethodDeclarationBase &
  (
    | {
        idempotent: true;
        /** Consumers reuse an answer for the same arguments for `ttlMs`, at most `max` answers. Default none. */
        cache?: ResultCacheOptions;
      }
    | { idempotent?: boolean; cache?: undefined }
  );

/** One declaration for each method of `T`, none left out. */
export type DeclaredMethods<T> = { [K in MethodNames<T>]: MethodDeclaration };

export interface ServiceDefinitionOptions<T> {
  /** Version of the contract. Default '1.0.0'. */
  version?: string;
  /** Group, to run several implementations of one version side by side. Default '' (none). */
  group?: string;
  /**
   * Declared methods. When present, it must list every method of `T` (`{}` for one without options): a
   * method left out is a compile error, because exactly the declared methods are callable, on the
   * provider and on a reference. When absent, the implementation's own functions are callable (never
   * those inherited from Object) and a reference calls any name.
   */
  methods?: DeclaredMethods<T>;
  /**
   * The service's own business errors, by class or by `name`: thrown by a method, they reach the caller
   * with their name, message and own fields (`ProviderError`). Any other error reaches the caller with
   * its name and message only; a system error (fs, net) not even that (docs/errors.md). Default [].
   */
  errors?: readonly ErrorDeclaration[];
  /**
   * The service's Protocol Buffers messages: a protobufjs `Root` whose `.proto` declares a service of
   * this name with one rpc per method (or `{ root, service }` naming it), so callers may send protobuf
   * bodies (docs/http.md). Checked here: a method without its rpc or message types throws. Default none.
   */
  protobuf?: ProtobufDeclaration;
}

export interface ServiceDefinition<T> extends ServiceKey {
  /** Declared methods, or undefined when the implementation decides. */
  readonly methods: Readonly<Record<string, MethodDeclaration>> | undefined;
  /** Declared business errors (classes or names). */
  readonly errors: readonly ErrorDeclaration[];
  /** The methods' protobuf messages, when the definition declares them. */
  readonly protobuf?: ProtobufBinding;
  /** Phantom field carrying the interface type; never set. */
  readonly __type?: T;
}

const SERVICE_NAME = /^[A-Za-z_$][\w$.-]*$/;

export function defineService<T>(
  name: string,
  options: ServiceDefinitionOptions<T> = {},
): ServiceDefinition<T> {
  if (!SERVICE_NAME.test(name)) {
    throw new TypeError(`invalid service name "${name}": use letters, digits, '.', '_', '-' or '$'`);
  }
  const methods = options.methods as Record<string, MethodDeclaration> | undefined;
  if (methods) {
    for (const method of Object.keys(methods)) {
      assertMethodName(name, method);
      checkDeclaredCache(name, method, methods[method]);
      checkDeclaredStream(name, method, methods[method]);
      checkDeclaredPriority(name, method, methods[method]);
    }
  }
  const definition = {
    name,
    version: options.version ?? '1.0.0',
    group: options.group ?? '',
    methods: methods ? Object.freeze({ ...methods }) : undefined,
    errors: Object.freeze([...(options.errors ?? [])]),
    ...(options.protobuf === undefined
      ? {}
      : { protobuf: bindProtobuf(options.protobuf, name, methods ? Object.keys(methods) : undefined) }),
  };
  if (options.protobuf === undefined && methods !== undefined && hasSchemas(methods)) {
    // every method with args and returns: its messages are those `exportProto` writes, made when first
    // asked for (none when a schema cannot be written as protobuf)
    let binding: { value: ProtobufBinding | undefined } | undefined;
    Object.defineProperty(definition, 'protobuf', {
      enumerable: true,
      get: () => {
        binding ??= { value: schemaBinding(name, methods) };
        return binding.value;
      },
    });
  }
  return Object.freeze(definition);
}

/** Names that are never callable, whatever a definition or implementation says. */
/** `$echo` is the echo every service answers (core/echo.ts): no definition declares it. */
const FORBIDDEN_METHODS = new Set(['constructor', '__proto__', 'prototype', 'then', ECHO_METHOD]);

export function isForbiddenMethodName(method: string): boolean {
  return FORBIDDEN_METHODS.has(method) || Object.hasOwn(Object.prototype, method);
}

/**
 * The functions an implementation carries as its own properties (an object literal's methods, arrow
 * functions in fields) that its definition does not declare: they are not callable remotely, which is
 * most likely a method missing from `methods`. Empty when the definition declares no methods (then the
 * implementation's functions are what is callable). Class methods are not listed: helpers live there.
 */
export function undeclaredFunctions(
  definition: ServiceDefinition<unknown>,
  implementation: object,
): string[] {
  const declared = definition.methods;
  if (declared === undefined) return [];
  return Object.keys(implementation).filter(
    (name) =>
      typeof (implementation as Record<string, unknown>)[name] === 'function' &&
      !Object.hasOwn(declared, name) &&
      !isForbiddenMethodName(name),
  );
}

function assertMethodName(service: string, method: string): void {
  if (isForbiddenMethodName(method)) {
    throw new TypeError(`service ${service} cannot declare a method named "${method}"`);
  }
}

/** A declared priority is one of CALL_PRIORITIES (a ConfigError naming the key otherwise). */
function checkDeclaredPriority(
  service: string,
  method: string,
  declaration: MethodDeclaration | undefined,
): void {
  const priority = declaration?.priority;
  if (priority === undefined || isCallPriority(priority)) return;
  throw new ConfigError(
    `defineService(${service}).methods.${method}.priority`,
    priority,
    `one of ${CALL_PRIORITIES.join(', ')}`,
    { source: `code, defineService(${service})` },
  );
}

/** A declared cache: well-formed, and on an idempotent, answering method (a ConfigError otherwise). */
function checkDeclaredCache(
  service: string,
  method: string,
  declaration: MethodDeclaration | undefined,
): void {
  const cache = declaration?.cache;
  if (cache === undefined) return;
  const key = `defineService(${service}).methods.${method}.cache`;
  const source = `code, defineService(${service})`;
  parseConfig(resultCacheSchema, cache, { keyPrefix: `${key}.`, sourceOf: () => source });
  checkCacheable(key, cache, declaration!, source);
}

/** A declared stream: a known kind, and none of the options only a unary call has (a ConfigError). */
function checkDeclaredStream(
  service: string,
  method: string,
  declaration: MethodDeclaration | undefined,
): void {
  const stream = (declaration as { stream?: unknown } | undefined)?.stream;
  if (stream === undefined) return;
  const key = `defineService(${service}).methods.${method}.stream`;
  if (typeof stream !== 'string' || !STREAM_KINDS.has(stream)) {
    throw new ConfigError(key, stream, "'server', 'client' or 'bidi'");
  }
  for (const unaryOnly of ['oneway', 'cache', 'mock'] as const) {
    const value = declaration![unaryOnly];
    if (value !== undefined && value !== false) {
      throw new ConfigError(
        key,
        stream,
        `a unary method: a stream method cannot also declare \`${unaryOnly}\` (remove one of them)`,
      );
    }
  }
}

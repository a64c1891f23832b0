/**
 * The provider's table of exported services: which services exist, and for each exactly which methods
 * are callable. Only declared methods (or, without declarations, the implementation's own functions up
 * to but excluding Object.prototype) are entered; lookups go through Maps, so `constructor`,
 * `__proto__`, `toString` and anything inherited can never be reached.
 */

import { ECHO_METHOD } from '../core/echo.js';
import { type CompiledChain, compileChain, type NamedFilter, type Step } from '../core/filter.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import { validationFilter } from '../filters/validation.js';
import {
  isForbiddenMethodName,
  type MethodDeclaration,
  type ServiceDefinition,
  type StreamKind,
} from '../service/define-service.js';
import { runInAsyncCallContext, runInCallContext } from './call-context.js';
import { unlessExpired } from './expired-guard.js';
import type { ServerInvocation } from './server-invocation.js';

export interface ExportedMethod {
  /** The service's definition. */
  readonly service: ServiceDefinition<unknown>;
  readonly name: string;
  readonly label: string;
  readonly declaration: MethodDeclaration;
  /**
   * The method's provider chain: its filters in order (Callisto's, the app's, the service's, the
   * method's; validation when it declares a schema), then the implementation, which may answer without a
   * promise.
   */
  readonly chain: CompiledChain<ServerInvocation>;
}

export interface ExportedService {
  readonly definition: ServiceDefinition<unknown>;
  readonly methods: ReadonlyMap<string, ExportedMethod>;
  /**
   * `$echo` (core/echo.ts): answers its first argument through the service's filters (the app's and
   * the service's), never calling the implementation. Not one of `methods` (not listed, not recorded).
   */
  readonly echo: ExportedMethod;
  /** The entries that serve it (`provide(…, { scope, protocols })`); an entry it is not on answers ServiceNotFound. */
  readonly servedOn: ServedOn;
}

/** Which of the provider's entries serve a service. */
export interface ServedOn {
  /** The app's own consumers, in-process. */
  readonly injvm: boolean;
  /** The RPC port. */
  readonly callisto: boolean;
  /** The HTTP/JSON entry. */
  readonly http: boolean;
  /** The gRPC entry (provider/grpc/). */
  readonly grpc: boolean;
}

/** Every entry. */
export const SERVED_EVERYWHERE: ServedOn = { injvm: true, callisto: true, http: true, grpc: true };

export interface ServiceTable {
  /**
   * From now on every method runs in an async call context (AsyncLocalStorage), as with
   * `asyncCallContext: true`: the app turns it on when it refers a service, so that calls its methods
   * make after an `await` inherit from the call they serve (docs/cluster.md, "Context across hops").
   */
  carryContext(): void;
  /**
   * Exports a service; `filtersOf(method)` gives each method's provider filters (in any order), and
   * `terminalOf(method)`, when it gives one, what runs in place of the implementation on the loop (a
   * worker executor, executor-step.ts).
   */
  add(
    definition: ServiceDefinition<unknown>,
    implementation: object,
    filtersOf: (method: string) => readonly NamedFilter<ServerInvocation>[],
    terminalOf?: (method: string, label: string) => Step<ServerInvocation> | undefined,
    servedOn?: ServedOn,
  ): ExportedService;
  /** Removes a service; calls to it then get ServiceNotFound. */
  remove(definition: ServiceDefinition<unknown>): void;
  lookup(name: string, version: string, group: string): ExportedService | undefined;
  list(): ExportedService[];
  /** Changes whenever a service is added or removed (lets callers cache lookups). */
  readonly version: number;
}

/** The callable method names of an implementation. */
export function implementedMethodNames(
  definition: ServiceDefinition<unknown>,
  implementation: object,
): string[] {
  if (definition.methods) {
    const names = Object.keys(definition.methods);
    for (const name of names) {
      if (typeof (implementation as Record<string, unknown>)[name] !== 'function') {
        throw new TypeError(`implementation of ${definition.name} lacks declared method "${name}"`);
      }
    }
    return names;
  }
  const names = new Set<string>();
  for (let target: object | null = implementation; target && target !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(target)) {
      if (isForbiddenMethodName(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(target, name);
      if (descriptor && typeof descriptor.value === 'function') names.add(name);
    }
    target = Object.getPrototypeOf(target);
  }
  return [...names];
}

/** What one method is exported from. */
interface MethodExport {
  readonly definition: ServiceDefinition<unknown>;
  readonly implementation: object;
  readonly name: string;
  readonly filters: readonly NamedFilter<ServerInvocation>[];
  readonly terminal: Step<ServerInvocation> | undefined;
  /** Read per call: whether the method runs in an async call context (`carryContext()` turns it on). */
  readonly context: { async: boolean };
}

function exportMethod(spec: MethodExport): ExportedMethod {
  const { definition, implementation, name, filters, terminal } = spec;
  const declaration = definition.methods?.[name] ?? {};
  const fn = (implementation as Record<string, (...args: unknown[]) => unknown>)[name]!;
  const label = `${definition.name}.${name}`;
  const context = spec.context;
  const run: typeof runInCallContext = (invocation, fn) =>
    context.async ? runInAsyncCallContext(invocation, fn) : runInCallContext(invocation, fn);
  const kind = declaration.stream;
  // a call whose deadline passed while it waited in the provider is not run (expired-guard.ts)
  const call: Step<ServerInvocation> = unlessExpired(
    terminal ??
      (kind === undefined
        ? (invocation) => run(invocation, () => fn.apply(implementation, invocation.args))
        : streamCall({ label, kind, run, invoke: (args) => fn.apply(implementation, args) })),
  );
  const schema = declaration.args;
  const chain = compileChain(
    schema === undefined ? filters : [...filters, validationFilter(label, schema)],
    call,
  );
  return { service: definition, name, label, declaration, chain };
}

/** What a stream method's terminal step is made of. */
interface StreamCallInit {
  readonly label: string;
  readonly kind: StreamKind;
  readonly run: typeof runInCallContext;
  readonly invoke: (args: unknown[]) => unknown;
}

/**
 * The terminal step of a stream method: the consumer's messages in the stream argument's slot (the last
 * one), the handler called in its call context, and for a server or two-way stream what it returns
 * driven to the consumer (the step's promise settles when the stream ended: the chain's filters, the
 * concurrency slot included, hold the call as long as it is open).
 */
function streamCall(init: StreamCallInit): Step<ServerInvocation> {
  const { label, kind, run, invoke } = init;
  return (invocation) => {
    const port = invocation.stream;
    if (port === undefined) {
      throw new RpcError('BadRequest', `${label} is a ${kind} stream: open it as a stream`);
    }
    let args = invocation.args;
    if (port.input !== undefined) {
      args = args.slice();
      if (args.length === 0) args.push(port.input);
      else args[args.length - 1] = port.input;
    }
    return run(invocation, () => {
      const result = invoke(args);
      return kind === 'client' ? result : port.drive(result, label);
    });
  };
}

/** The echo method of a service: its filters, then the first argument back. */
function exportEcho(
  definition: ServiceDefinition<unknown>,
  filters: readonly NamedFilter<ServerInvocation>[],
): ExportedMethod {
  const call: Step<ServerInvocation> = (invocation) => invocation.args[0];
  return {
    service: definition,
    name: ECHO_METHOD,
    label: `${definition.name}.${ECHO_METHOD}`,
    declaration: { idempotent: true },
    chain: compileChain(filters, call),
  };
}

/** The method `name` of a service as its callers reach it: a declared one, or `$echo`. */
export function methodOf(service: ExportedService, name: string): ExportedMethod | undefined {
  return service.methods.get(name) ?? (name === ECHO_METHOD ? service.echo : undefined);
}

const tableKey = (name: string, version: string, group: string): string => `${group}/${name}:${version}`;

/** `asyncContext`: methods run with `callContext()` kept past their awaits (AsyncLocalStorage). */
export function createServiceTable(options: { asyncContext?: boolean } = {}): ServiceTable {
  const services = new Map<string, ExportedService>();
  const context = { async: options.asyncContext ?? false };
  let version = 0;
  return {
    carryContext() {
      context.async = true;
    },
    get version() {
      return version;
    },
    add(definition, implementation, filtersOf, terminalOf, servedOn = SERVED_EVERYWHERE) {
      const key = tableKey(definition.name, definition.version, definition.group);
      if (services.has(key)) throw new Error(`service ${serviceKeyString(definition)} is already provided`);
      const methods = new Map<string, ExportedMethod>();
      for (const name of implementedMethodNames(definition, implementation)) {
        const terminal = terminalOf?.(name, `${definition.name}.${name}`);
        methods.set(
          name,
          exportMethod({
            definition,
            implementation,
            name,
            filters: filtersOf(name),
            terminal,
            context,
          }),
        );
      }
      const echo = exportEcho(definition, filtersOf(ECHO_METHOD));
      const exported: ExportedService = { definition, methods, echo, servedOn };
      services.set(key, exported);
      version++;
      return exported;
    },
    remove(definition) {
      services.delete(tableKey(definition.name, definition.version, definition.group));
      version++;
    },
    lookup(name, version, group) {
      return services.get(tableKey(name, version, group));
    },
    list() {
      return [...services.values()];
    },
  };
}

/**
 * The error for a call to a method the service does not expose. It names the callable methods only
 * when `listCallable` (trusted setups, `server.exposeErrors: 'all'`): a remote caller is not told what
 * else it could call.
 */
export function methodNotFound(service: ExportedService, method: string, listCallable = false): RpcError {
  const key = serviceKeyString(service.definition);
  const callable = listCallable ? ` (callable: ${[...service.methods.keys()].join(', ') || 'none'})` : '';
  return new RpcError('MethodNotFound', `service ${key} has no method "${method}"${callable}`);
}

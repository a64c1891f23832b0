/**
 * The provider's table of exported services: which services exist, and for each exactly which methods
 * are callable. Only declared methods (or, without declarations, the implementation's own functions up
 * to but excluding Object.prototype) are entered; lookups go through Maps, so `constructor`,
 * `__proto__`, `toString` and anything inherited can never be reached.
 */
import { composeFilters, type Filter, type Invocation, type Invoker } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import { runInCallContext } from './call-context.js';
import { isForbiddenMethodName, type MethodDeclaration, type ServiceDefinition } from './define-service.js';
import { createArgumentsValidator } from './validate-arguments.js';

export interface ExportedMethod {
  readonly name: string;
  readonly label: string;
  readonly declaration: MethodDeclaration;
  /** The full provider path: filters, validation, then the implementation. */
  readonly invoke: Invoker;
  /**
   * Set when there are no filters and no validation: calls the implementation directly and may return
   * a plain value (the dispatcher's fast path).
   */
  readonly direct: ((invocation: Invocation) => unknown) | undefined;
}

export interface ExportedService {
  readonly definition: ServiceDefinition<unknown>;
  readonly methods: ReadonlyMap<string, ExportedMethod>;
}

export interface ServiceTable {
  add(
    definition: ServiceDefinition<unknown>,
    implementation: object,
    filters: readonly Filter[],
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

function exportMethod(
  definition: ServiceDefinition<unknown>,
  implementation: object,
  name: string,
  filters: readonly Filter[],
): ExportedMethod {
  const declaration = definition.methods?.[name] ?? {};
  const fn = (implementation as Record<string, (...args: unknown[]) => unknown>)[name]!;
  const label = `${definition.name}.${name}`;
  const validate = declaration.args ? createArgumentsValidator(label, declaration.args) : undefined;
  const call = (invocation: Invocation): unknown =>
    runInCallContext(invocation, () => fn.apply(implementation, invocation.args));
  const terminal: Invoker = async (invocation) => {
    if (validate) {
      const checked = await validate(invocation.args);
      (invocation as { args: unknown[] }).args = checked;
    }
    return call(invocation);
  };
  const invoke = composeFilters(filters, terminal);
  return { name, label, declaration, invoke, direct: filters.length === 0 && !validate ? call : undefined };
}

const tableKey = (name: string, version: string, group: string): string => `${group}/${name}:${version}`;

export function createServiceTable(): ServiceTable {
  const services = new Map<string, ExportedService>();
  let version = 0;
  return {
    get version() {
      return version;
    },
    add(definition, implementation, filters) {
      const key = tableKey(definition.name, definition.version, definition.group);
      if (services.has(key)) throw new Error(`service ${serviceKeyString(definition)} is already provided`);
      const methods = new Map<string, ExportedMethod>();
      for (const name of implementedMethodNames(definition, implementation)) {
        methods.set(name, exportMethod(definition, implementation, name, filters));
      }
      const exported: ExportedService = { definition, methods };
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

/**
 * Filters with a name, at a position, in an order: the seam every cross-cutting concern plugs into,
 * Callisto's own and a user's alike (docs/filters.md).
 *
 * Positions:
 * - `provider`: on the provider, after the request is decoded, before the service's method;
 * - `call`: on the consumer, once per call, before the cluster strategy (which may make several attempts);
 * - `attempt`: on the consumer, once per attempt, after the balancer picked a provider, before the wire.
 *
 * A filter has one of two forms:
 * - wrapping: `filter: (next) => (invocation) => …`, free to do anything around the rest of the chain;
 * - hooks: `start(invocation)` before the rest (throw to refuse the call) and `end(invocation, error)`
 *   after it ended, both synchronous. Hooks cost no promise: a run of them at the head of a chain is
 *   called by the chain's runner around the rest, which is how Callisto's own filters (deadlines,
 *   admission, health, diagnostics) stay off the promise path.
 *
 * Filters run in ascending `order` (ties keep the order they were given in: app, then service or
 * reference, then method). Callisto's own filters take the orders of core/filter-order.ts (the table
 * docs/filters.md shows); a user filter is `DEFAULT_FILTER_ORDER` (500) unless it says otherwise. A filter that is not configured is not in the chain at all.
 */
import { DEFAULT_FILTER_ORDER, FILTER_ORDER, FILTER_POSITIONS, type FilterPosition } from './filter-order.js';
import type { Filter, Invocation, Invoker } from './invocation.js';

export { DEFAULT_FILTER_ORDER, FILTER_POSITIONS, type FilterPosition };

export interface FilterSpec {
  /** Names the filter in messages and docs (`auth`, `metrics`). */
  readonly name: string;
  readonly position: FilterPosition;
  /** Lower runs first (outer). Default 500. */
  readonly order?: number;
  /** The wrapping form. */
  readonly filter?: Filter;
  /** Hook form: before the rest of the chain; throw (an RpcError) to refuse the call. */
  readonly start?: (invocation: Invocation) => void;
  /** Hook form: after the rest ended; `error` is what it failed with, undefined on success. */
  readonly end?: (invocation: Invocation, error: unknown) => void;
  /**
   * @internal Callisto's own wrapping form: `(next) => step`, where a step may return a value or a
   * promise (no promise is made for a synchronous rest). Not for users (`filter` is theirs).
   */
  readonly step?: (next: Step<Invocation>) => Step<Invocation>;
}

/** A filter as the chain builder takes it (see `defineFilter`). */
export interface NamedFilter extends FilterSpec {
  readonly order: number;
}

/** Either a named filter, or a plain `Filter` function (at its list's position, order 500). */
export type FilterEntry = Filter | NamedFilter;

/** Checks a filter spec and fills its order; throws a TypeError naming what is wrong. */
export function defineFilter(spec: FilterSpec): NamedFilter {
  const where = `filter ${JSON.stringify(spec?.name)}`;
  if (typeof spec !== 'object' || spec === null) throw new TypeError('defineFilter() takes a filter spec');
  if (typeof spec.name !== 'string' || spec.name === '')
    throw new TypeError(`${where}: name must be a non-empty string`);
  if (!FILTER_POSITIONS.includes(spec.position)) {
    throw new TypeError(
      `${where}: position must be one of ${FILTER_POSITIONS.join(', ')}, not ${JSON.stringify(spec.position)}`,
    );
  }
  const order = spec.order ?? DEFAULT_FILTER_ORDER;
  if (!Number.isFinite(order)) throw new TypeError(`${where}: order must be a finite number`);
  const hooks = spec.start !== undefined || spec.end !== undefined;
  if (hooks === (spec.filter !== undefined)) {
    throw new TypeError(`${where}: give either filter (a wrapping filter) or start/end hooks, not both`);
  }
  for (const key of ['filter', 'start', 'end'] as const) {
    if (spec[key] !== undefined && typeof spec[key] !== 'function') {
      throw new TypeError(`${where}: ${key} must be a function`);
    }
  }
  // a request's arguments are counted by `admission` and decoded by `decode` in one turn, from bytes
  // the connection keeps for just that long: nothing between them may wait
  const { admission, decode } = FILTER_ORDER.provider;
  if (spec.position === 'provider' && !hooks && order > admission && order < decode) {
    throw new TypeError(
      `${where}: a wrapping provider filter cannot take order ${order}: orders between ${admission} and ${decode} (admission and decode) take start/end hooks only; choose an order outside, or hooks`,
    );
  }
  return Object.freeze({ ...spec, order });
}

/** `entry` as a named filter at `position`; a named one must be at that position. */
export function namedFilter(entry: FilterEntry, position: FilterPosition, where: string): NamedFilter {
  if (typeof entry === 'function') {
    return { name: entry.name || 'anonymous', position, order: DEFAULT_FILTER_ORDER, filter: entry };
  }
  if (entry?.position !== position) {
    throw new TypeError(
      `${where}: filter ${JSON.stringify(entry?.name)} is a ${entry?.position} filter; it cannot be used at the ${position} position`,
    );
  }
  return entry;
}

/** Sorts by order, keeping the given order among equals. */
export function orderFilters(filters: readonly NamedFilter[]): NamedFilter[] {
  return filters
    .map((filter, index) => ({ filter, index }))
    .sort((a, b) => a.filter.order - b.filter.order || a.index - b.index)
    .map(({ filter }) => filter);
}

/**
 * What a step of a chain may return internally: a value or a promise of one (a synchronous
 * implementation answers without a promise).
 */
export type Step<I extends Invocation = Invocation> = (invocation: I) => unknown;

/** Hook filters, as a chain's runner calls them. */
export interface Hook<I extends Invocation = Invocation> {
  readonly name: string;
  readonly start: ((invocation: I) => void) | undefined;
  readonly end: ((invocation: I, error: unknown) => void) | undefined;
}

/**
 * A chain ready to run: the hook filters at its head, which its runner calls around `rest` (start in
 * order, end in reverse order once the rest ended, without a promise), and the rest itself.
 */
export interface CompiledChain<I extends Invocation = Invocation> {
  readonly hooks: readonly Hook<I>[];
  readonly rest: Step<I>;
  /** Names in running order, for docs and tests. */
  readonly names: readonly string[];
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** `step` as an Invoker: always a promise. */
export function asInvoker<I extends Invocation>(step: Step<I>): Invoker {
  return (invocation) => {
    try {
      const result = step(invocation as I);
      return isThenable(result) ? Promise.resolve(result) : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/** A hook filter as a wrapping step (for hooks that come after a wrapping filter). */
function hookAsStep<I extends Invocation>(hook: Hook<I>, next: Step<I>): Step<I> {
  return (invocation) => {
    hook.start?.(invocation);
    let result: unknown;
    try {
      result = next(invocation);
    } catch (error) {
      hook.end?.(invocation, error);
      throw error;
    }
    if (!isThenable(result)) {
      hook.end?.(invocation, undefined);
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        hook.end?.(invocation, undefined);
        return value;
      },
      (error: unknown) => {
        hook.end?.(invocation, error);
        throw error;
      },
    );
  };
}

/**
 * Builds a chain from filters (any order: they are sorted) around `terminal`. Internal filters may be
 * given as `(next: Step) => Step` in `internal` (keyed by name): they may return values or promises.
 */
export function compileChain<I extends Invocation>(
  filters: readonly NamedFilter[],
  terminal: Step<I>,
  internal: ReadonlyMap<string, (next: Step<I>) => Step<I>> = new Map(),
): CompiledChain<I> {
  const ordered = orderFilters(filters);
  const isHook = (filter: NamedFilter) =>
    filter.filter === undefined && filter.step === undefined && !internal.has(filter.name);
  let head = 0;
  while (head < ordered.length && isHook(ordered[head]!)) head++;
  const hooks: Hook<I>[] = ordered.slice(0, head).map((filter) => ({
    name: filter.name,
    start: filter.start as Hook<I>['start'],
    end: filter.end as Hook<I>['end'],
  }));
  let rest: Step<I> = terminal;
  for (let i = ordered.length - 1; i >= head; i--) {
    const filter = ordered[i]!;
    const wrapInternal =
      internal.get(filter.name) ?? (filter.step as ((next: Step<I>) => Step<I>) | undefined);
    if (wrapInternal !== undefined) rest = wrapInternal(rest);
    else if (filter.filter !== undefined) {
      const inner = asInvoker(rest);
      rest = filter.filter(inner) as Step<I>;
    } else {
      rest = hookAsStep({ name: filter.name, start: filter.start, end: filter.end } as Hook<I>, rest);
    }
  }
  return { hooks, rest, names: ordered.map((filter) => filter.name) };
}

/** Runs the start hooks; on a refusal, the end hooks of those that started (in reverse), then rethrows. */
export function startHooks<I extends Invocation>(hooks: readonly Hook<I>[], invocation: I): void {
  let started = 0;
  try {
    for (; started < hooks.length; started++) hooks[started]!.start?.(invocation);
  } catch (error) {
    endHooks(hooks, invocation, error, started);
    throw error;
  }
}

/** Runs the end hooks of the first `count` hooks, last first. A hook that throws does not stop the others. */
export function endHooks<I extends Invocation>(
  hooks: readonly Hook<I>[],
  invocation: I,
  error: unknown,
  count: number = hooks.length,
): void {
  for (let i = count - 1; i >= 0; i--) {
    const end = hooks[i]!.end;
    if (end === undefined) continue;
    try {
      end(invocation, error);
    } catch {
      // an end hook cannot change how the call ended
    }
  }
}

/**
 * Filters with a name, at a position, in an order: the seam every cross-cutting concern plugs into,
 * Callisto's own and a user's alike (docs/filters.md).
 *
 * Positions:
 * - `provider`: on the provider, after the request is decoded, before the service's method;
 * - `call`: on the consumer, once per call, before the cluster strategy (which may make several attempts);
 * - `attempt`: on the consumer, once per attempt, after the balancer picked a provider, before the wire.
 *
 * A filter has one of two forms, as a chain sees it:
 * - hooks: `start(invocation)` before the rest (throw to refuse the call) and `end(invocation, error)`
 *   after it ended, both synchronous. Hooks cost no promise: a run of them at the head of a chain is
 *   called by the chain's runner around the rest, which is how Callisto's own filters (deadlines,
 *   admission, health, diagnostics) stay off the promise path; a run after a wrapping filter is one step
 *   of the chain, which costs no promise either while the rest answers without one.
 * - wrapping: a step around the rest of the chain. A user writes it as `filter: (next) => (invocation)
 *   => …` with `next` returning a promise (the public `Filter`); Callisto's own give `step: (next) =>
 *   (invocation) => …`, where both may answer with a value or a promise (no promise is made for a
 *   synchronous rest). `defineFilter` turns a `filter` into a step, so a chain knows steps and hooks.
 *
 * A filter is typed by the invocation it reads (`NamedFilter<AdmittedInvocation>`): a chain compiled for
 * an invocation type takes only filters whose invocation it is, so no filter needs to downcast one.
 *
 * Filters run in ascending `order` (ties keep the order they were given in: app, then service or
 * reference, then method). Callisto's own filters take the orders of core/filter-order.ts (the table
 * docs/filters.md shows); a user filter is `DEFAULT_FILTER_ORDER` (500) unless it says otherwise. A
 * filter that is not configured is not in the chain at all.
 */
import { DEFAULT_FILTER_ORDER, FILTER_ORDER, FILTER_POSITIONS, type FilterPosition } from './filter-order.js';
import type { Filter, Invocation, Invoker } from './invocation.js';

export { DEFAULT_FILTER_ORDER, FILTER_POSITIONS, type FilterPosition };

/**
 * What a step of a chain may return internally: a value or a promise of one (a synchronous
 * implementation answers without a promise).
 */
export type Step<I extends Invocation = Invocation> = (invocation: I) => unknown;

/**
 * The wrapping form of Callisto's own filters: the rest of the chain in, the filter's step out. Generic
 * in the chain's invocation, so that a filter reading an `I` fits every chain whose invocation is one.
 */
export type Wrap<I extends Invocation = Invocation> = <X extends I>(next: Step<X>) => Step<X>;

export interface FilterSpec<I extends Invocation = Invocation> {
  /** Names the filter in messages and docs (`auth`, `metrics`). */
  readonly name: string;
  readonly position: FilterPosition;
  /** Lower runs first (outer). Default 500. */
  readonly order?: number;
  /** The wrapping form. */
  readonly filter?: Filter;
  /** Hook form: before the rest of the chain; throw (an RpcError) to refuse the call. */
  readonly start?: (invocation: I) => void;
  /** Hook form: after the rest ended; `error` is what it failed with, undefined on success. */
  readonly end?: (invocation: I, error: unknown) => void;
  /**
   * @internal Callisto's own wrapping form: `(next) => step`, where a step may return a value or a
   * promise (no promise is made for a synchronous rest). Not for users (`filter` is theirs).
   */
  readonly step?: Wrap<I>;
}

/**
 * A filter as the chain builder takes it (see `defineFilter`), typed by the invocation its hooks or step
 * read; a wrapping filter has its `step` (made from `filter` for a user's).
 */
export interface NamedFilter<I extends Invocation = Invocation> extends FilterSpec<I> {
  readonly order: number;
}

/** Either a named filter, or a plain `Filter` function (at its list's position, order 500). */
export type FilterEntry = Filter | NamedFilter;

/** What defineFilter made (a filter given again is not checked again). */
const defined = new WeakSet<object>();

/** Checks a filter spec and fills its order; throws a TypeError naming what is wrong. */
export function defineFilter<I extends Invocation = Invocation>(spec: FilterSpec<I>): NamedFilter<I> {
  if (defined.has(spec)) return spec as NamedFilter<I>;
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
  const forms = (hooks ? 1 : 0) + (spec.filter !== undefined ? 1 : 0) + (spec.step !== undefined ? 1 : 0);
  if (forms !== 1) {
    throw new TypeError(`${where}: give either filter (a wrapping filter) or start/end hooks, not both`);
  }
  for (const key of ['filter', 'start', 'end', 'step'] as const) {
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
  const filter = spec.filter;
  const step = spec.step ?? (filter === undefined ? undefined : userStep<I>(filter));
  const named: NamedFilter<I> = Object.freeze({ ...spec, order, ...(step === undefined ? {} : { step }) });
  defined.add(named);
  return named;
}

/** A user's wrapping filter as a step: its `next` always answers with a promise, as `Filter` says. */
function userStep<I extends Invocation>(filter: Filter): Wrap<I> {
  // the chain passes the invocation it was given on; the user's filter sees it as an Invocation
  return (next) => filter(asInvoker(next) as Invoker);
}

/** `entry` as a named filter at `position`; a named one must be at that position. */
export function namedFilter(entry: FilterEntry, position: FilterPosition, where: string): NamedFilter {
  if (typeof entry === 'function') {
    return defineFilter({ name: entry.name || 'anonymous', position, filter: entry });
  }
  if (entry?.position !== position) {
    throw new TypeError(
      `${where}: filter ${JSON.stringify(entry?.name)} is a ${entry?.position} filter; it cannot be used at the ${position} position`,
    );
  }
  // one not made by defineFilter (a literal object) is checked, and its `filter` made a step, here
  return defineFilter(entry);
}

/** Sorts by order, keeping the given order among equals. */
export function orderFilters<F extends { readonly order: number }>(filters: readonly F[]): F[] {
  return filters
    .map((filter, index) => ({ filter, index }))
    .sort((a, b) => a.filter.order - b.filter.order || a.index - b.index)
    .map(({ filter }) => filter);
}

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
  /** Whether `rest` is the terminal itself (no wrapping filter between the hooks and it). */
  readonly direct: boolean;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** `step` as an invoker: always a promise. */
export function asInvoker<I extends Invocation>(step: Step<I>): (invocation: I) => Promise<unknown> {
  return (invocation) => {
    try {
      return Promise.resolve(step(invocation));
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * A run of hook filters after a wrapping filter, as one step around `next`: started in order, ended in
 * reverse once the rest ended. No promise of its own while the rest answers without one; one for the
 * whole run when it answers with a promise.
 */
function hooksAsStep<I extends Invocation>(hooks: readonly Hook<I>[], next: Step<I>): Step<I> {
  return (invocation) => {
    startHooks(hooks, invocation);
    let result: unknown;
    try {
      result = next(invocation);
    } catch (error) {
      endHooks(hooks, invocation, error);
      throw error;
    }
    if (!isThenable(result)) {
      endHooks(hooks, invocation, undefined);
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        endHooks(hooks, invocation, undefined);
        return value;
      },
      (error: unknown) => {
        endHooks(hooks, invocation, error);
        throw error;
      },
    );
  };
}

const hookOf = <I extends Invocation>(filter: NamedFilter<I>): Hook<I> => ({
  name: filter.name,
  start: filter.start,
  end: filter.end,
});

/**
 * Builds a chain from filters (any order: they are sorted) around `terminal`: the hooks at its head for
 * the runner, then the steps, each run of hooks between them one step.
 */
export function compileChain<I extends Invocation>(
  filters: readonly NamedFilter<I>[],
  terminal: Step<I>,
): CompiledChain<I> {
  const ordered = orderFilters(filters);
  let head = 0;
  while (head < ordered.length && ordered[head]!.step === undefined) head++;
  let rest: Step<I> = terminal;
  for (let i = ordered.length - 1; i >= head; ) {
    const step = ordered[i]!.step;
    if (step !== undefined) {
      rest = step(rest);
      i--;
      continue;
    }
    let first = i;
    while (ordered[first - 1]!.step === undefined) first--; // ordered[head] is a step
    rest = hooksAsStep(ordered.slice(first, i + 1).map(hookOf), rest);
    i = first - 1;
  }
  return {
    hooks: ordered.slice(0, head).map(hookOf),
    rest,
    names: ordered.map((filter) => filter.name),
    direct: rest === terminal,
  };
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

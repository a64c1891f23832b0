/**
 * The provider's adaptive admission (docs/operations.md, "Overload protection"): one count of the calls
 * in flight in the whole provider against the adaptive limit (adaptive-limit.ts), with priorities,
 * applied only while the provider is overloaded (overload-gate.ts).
 *
 * The limit is learnt all the time, but a call is refused only while the gate says the provider is
 * overloaded: its event loop saturated and more calls arriving than ending, interval after interval. A
 * burst or a closed loop of callers queues too, and its latency brings the learnt limit down, but it is
 * admitted whole: it drains by itself. When the gate opens, the limit is brought down at once to what
 * the provider can serve within the limit's target latency by Little's law (the calls that ended per ms
 * over the last interval × `targetRttMs`), if that is lower: Gradient2 alone shrinks by at most a tenth
 * per window, while the queue of an overload grows every window. Calls beyond it are refused until the
 * queue has drained under it.
 *
 * One limit for the whole provider rather than one per method: the capacity being found is the
 * process's (one event loop, one core), which every method shares; per-method limits would each learn
 * the same overload and together admit their sum.
 *
 * Priorities (call-priority.ts): below `sheddableShare` (0.8) of the limit every call is admitted
 * without its priority being looked at — the unloaded fast path is one comparison and one increment.
 * From there to the limit `sheddable` calls are refused, so that the last fifth of the capacity is kept
 * for the rest; at the limit `default` calls are refused too, and `critical` ones are admitted up to
 * `criticalMargin` (1.5) times the limit: what must not fail queues a little more instead of failing,
 * and the latency it adds brings the limit down for everybody else.
 */
import { type AdaptiveLimit, type AdaptiveLimitOptions, createAdaptiveLimit } from './adaptive-limit.js';
import type { CallPriority } from './call-priority.js';
import { createEventLoopDelay, type EventLoopDelay } from './event-loop-delay.js';
import {
  createOverloadGate,
  createUtilisationReader,
  DEFAULT_OVERLOAD_GATE_OPTIONS,
  type OverloadGate,
  type OverloadGateOptions,
  type UtilisationReader,
} from './overload-gate.js';

export interface ConcurrencyLimiterOptions extends Partial<AdaptiveLimitOptions> {
  /** Share of the limit below which sheddable calls are admitted, (0, 1]. Default 0.8. */
  readonly sheddableShare?: number;
  /** Critical calls are admitted up to this multiple of the limit, ≥ 1. Default 1.5. */
  readonly criticalMargin?: number;
  /** Whether the event loop's delay counts in the latency. Default true. */
  readonly eventLoopDelay?: boolean;
  /** How overload is told from a burst (overload-gate.ts). */
  readonly overload?: Partial<OverloadGateOptions>;
  /** The event loop's utilisation since the last read; default `performance.eventLoopUtilization`. */
  readonly utilisation?: UtilisationReader;
}

export const DEFAULT_SHEDDABLE_SHARE = 0.8;
export const DEFAULT_CRITICAL_MARGIN = 1.5;

export interface ConcurrencyLimiter {
  /** The current adaptive limit. */
  readonly limit: number;
  /** Calls admitted and not ended. */
  readonly inflight: number;
  /** Calls admitted since the start. */
  readonly admitted: number;
  /** Calls refused at the limit since the start. */
  readonly refused: number;
  /** Whether the provider counts as overloaded now: only then is the limit applied. */
  readonly overloaded: boolean;
  /** The event loop's utilisation over the overload gate's last interval, [0, 1]. */
  readonly utilisation: number;
  /** The event loop's mean delay over the last 100 ms, ms (0 when it is not watched). */
  readonly loopDelayMs: number;
  /** The learnt latencies, ms. */
  readonly shortRttMs: number;
  readonly longRttMs: number;
  /**
   * Admits a call (true) or refuses it (false) at monotonic time `nowMs`. `priorityOf` is asked only
   * when the provider is overloaded and the count near the limit.
   */
  acquire<T>(priorityOf: (of: T) => CallPriority, of: T, nowMs: number): boolean;
  /**
   * An admitted call ended (or was refused by a later limit) at `nowMs`; `rttMs` when it counts as a
   * sample (a result or the handler's own error).
   */
  release(rttMs: number | undefined, nowMs: number): void;
  /**
   * How long a call admitted now would wait for the event loop behind the calls in flight, ms: the
   * calls in flight × the loop's busy time per call (overload-gate.ts's `busyMsPerCall`). What bounds a
   * step into overload before the gate has seen it (filters/deadline.ts).
   */
  queueWaitMs(): number;
  /** Deadline-aware admission refused a call at `nowMs` (overload-gate.ts's `shedByDeadline`). */
  shedByDeadline(nowMs: number): void;
  close(): void;
}

/** Departures in the interval that opened the gate below which its throughput is too thin to cap on. */
const MIN_DEPARTURES_TO_CAP = 10;

class Limiter implements ConcurrencyLimiter {
  readonly #limit: AdaptiveLimit;
  readonly #loop: EventLoopDelay | undefined;
  readonly #gate: OverloadGate;
  readonly #intervalMs: number;
  readonly #sheddableShare: number;
  readonly #criticalMargin: number;
  inflight = 0;
  admitted = 0;
  refused = 0;
  /** Below this every call is admitted (sheddableShare of the limit). */
  #open = 0;
  #seenLimit = -1;

  constructor(options: ConcurrencyLimiterOptions) {
    this.#loop = options.eventLoopDelay === false ? undefined : createEventLoopDelay();
    const loop = this.#loop;
    this.#limit = createAdaptiveLimit(
      options,
      loop === undefined ? undefined : () => loop.delayMs(performance.now()),
    );
    this.#sheddableShare = options.sheddableShare ?? DEFAULT_SHEDDABLE_SHARE;
    this.#criticalMargin = options.criticalMargin ?? DEFAULT_CRITICAL_MARGIN;
    this.#intervalMs = options.overload?.intervalMs ?? DEFAULT_OVERLOAD_GATE_OPTIONS.intervalMs;
    this.#gate = createOverloadGate(options.overload, options.utilisation ?? createUtilisationReader(), () =>
      this.#overloaded(),
    );
    this.#refresh();
  }

  /** The gate opened: the limit comes down at once to what the provider served (Little's law). */
  #overloaded(): void {
    const perMs = this.#gate.throughputPerMs;
    if (perMs * this.#intervalMs >= MIN_DEPARTURES_TO_CAP) this.#limit.capAt(perMs * this.#limit.targetRttMs);
    this.#refresh();
  }

  get overloaded(): boolean {
    return this.#gate.overloaded;
  }
  get utilisation(): number {
    return this.#gate.utilisation;
  }
  get loopDelayMs(): number {
    return this.#loop === undefined ? 0 : this.#loop.delayMs(performance.now());
  }

  get limit(): number {
    return this.#limit.limit;
  }
  get shortRttMs(): number {
    return this.#limit.shortRttMs;
  }
  get longRttMs(): number {
    return this.#limit.longRttMs;
  }

  acquire<T>(priorityOf: (of: T) => CallPriority, of: T, nowMs: number): boolean {
    this.#gate.arrived(nowMs, this.inflight);
    const inflight = this.inflight;
    if (inflight < this.#open || !this.#gate.overloaded) {
      this.inflight = inflight + 1;
      this.admitted++;
      this.#limit.inflight(inflight + 1);
      return true;
    }
    return this.#nearLimit(priorityOf(of), nowMs);
  }

  #nearLimit(priority: CallPriority, nowMs: number): boolean {
    const limit = this.#limit.limit;
    const inflight = this.inflight;
    const admitted =
      priority === 'critical'
        ? inflight < limit * this.#criticalMargin
        : priority === 'default' && inflight < limit;
    if (!admitted) {
      this.refused++;
      this.#gate.refused(nowMs);
      return false;
    }
    this.inflight = inflight + 1;
    this.admitted++;
    this.#limit.inflight(inflight + 1);
    return true;
  }

  release(rttMs: number | undefined, nowMs: number): void {
    const inflight = this.inflight--;
    this.#gate.departed(nowMs, inflight);
    if (rttMs === undefined) return;
    this.#limit.record(rttMs, inflight, nowMs);
    if (this.#limit.limit !== this.#seenLimit) this.#refresh();
  }

  queueWaitMs(): number {
    return this.inflight * this.#gate.busyMsPerCall;
  }

  shedByDeadline(nowMs: number): void {
    this.#gate.shedByDeadline(nowMs, this.inflight);
  }

  #refresh(): void {
    this.#seenLimit = this.#limit.limit;
    this.#open = Math.floor(this.#seenLimit * this.#sheddableShare);
  }

  close(): void {
    this.#loop?.close();
  }
}

export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions = {}): ConcurrencyLimiter {
  return new Limiter(options);
}

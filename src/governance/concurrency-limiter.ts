/**
 * The provider's adaptive admission (docs/operations.md, "Overload protection"): one count of the calls
 * in flight in the whole provider against the adaptive limit (adaptive-limit.ts), with priorities.
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

export interface ConcurrencyLimiterOptions extends Partial<AdaptiveLimitOptions> {
  /** Share of the limit below which sheddable calls are admitted, (0, 1]. Default 0.8. */
  readonly sheddableShare?: number;
  /** Critical calls are admitted up to this multiple of the limit, ≥ 1. Default 1.5. */
  readonly criticalMargin?: number;
  /** Whether the event loop's delay counts in the latency. Default true. */
  readonly eventLoopDelay?: boolean;
}

export const DEFAULT_SHEDDABLE_SHARE = 0.8;
export const DEFAULT_CRITICAL_MARGIN = 1.5;

export interface ConcurrencyLimiter {
  /** The current adaptive limit. */
  readonly limit: number;
  /** Calls admitted and not ended. */
  readonly inflight: number;
  /** Calls refused at the limit since the start. */
  readonly refused: number;
  /** The learnt latencies, ms. */
  readonly shortRttMs: number;
  readonly longRttMs: number;
  /**
   * Admits a call (true) or refuses it (false). `priorityOf` is asked only when the count is near the
   * limit.
   */
  acquire<T>(priorityOf: (of: T) => CallPriority, of: T): boolean;
  /** An admitted call ended; `rttMs` when it counts as a sample (a result or the handler's own error). */
  release(rttMs: number | undefined, nowMs: number): void;
  close(): void;
}

class Limiter implements ConcurrencyLimiter {
  readonly #limit: AdaptiveLimit;
  readonly #loop: EventLoopDelay | undefined;
  readonly #sheddableShare: number;
  readonly #criticalMargin: number;
  inflight = 0;
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
    this.#refresh();
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

  acquire<T>(priorityOf: (of: T) => CallPriority, of: T): boolean {
    const inflight = this.inflight;
    if (inflight < this.#open) {
      this.inflight = inflight + 1;
      return true;
    }
    return this.#nearLimit(priorityOf(of));
  }

  #nearLimit(priority: CallPriority): boolean {
    const limit = this.#limit.limit;
    const inflight = this.inflight;
    const admitted =
      priority === 'critical'
        ? inflight < limit * this.#criticalMargin
        : priority === 'default' && inflight < limit;
    if (!admitted) {
      this.refused++;
      return false;
    }
    this.inflight = inflight + 1;
    this.#limit.inflight(inflight + 1);
    return true;
  }

  release(rttMs: number | undefined, nowMs: number): void {
    const inflight = this.inflight--;
    if (rttMs === undefined) return;
    this.#limit.record(rttMs, inflight, nowMs);
    if (this.#limit.limit !== this.#seenLimit) this.#refresh();
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

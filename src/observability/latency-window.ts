/**
 * A method's latency histogram with its min, max and mean: since the app started, and per window of
 * `windowMs` (the window being filled and the one before it, so that a reader polling right after a
 * window closed still sees a whole one). Windows are fixed, back to back from the first observation; an
 * observation that finds its window over starts the next (a window with no calls is not kept).
 * A few comparisons more per observation than the histogram alone, and no clock reading of its own (the
 * run's shared reading, core/clock.ts).
 */
import { tickMonotonic, tickNow } from '../core/clock.js';
import { LatencyHistogram } from './latency-histogram.js';
import { DEFAULT_OBSERVABILITY_CONFIG } from './observability-options.js';

/** What one window saw (or everything since start). */
export interface LatencyFigures {
  readonly calls: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

/** A window: when it started and ended (ms since epoch) and its figures. */
export interface WindowFigures extends LatencyFigures {
  readonly startTime: number;
  readonly endTime: number;
}

class Window {
  calls = 0;
  sumMs = 0;
  minMs = Number.POSITIVE_INFINITY;
  maxMs = 0;
  constructor(
    /** performance.now() when it started. */
    readonly start: number,
    /** Date.now() then. */
    readonly startTime: number,
  ) {}

  add(ms: number): void {
    this.calls++;
    this.sumMs += ms;
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }
}

const figuresOf = (calls: number, sumMs: number, minMs: number, maxMs: number): LatencyFigures => ({
  calls,
  minMs: calls === 0 ? 0 : minMs,
  maxMs,
  meanMs: calls === 0 ? 0 : sumMs / calls,
});

export class WindowedLatency extends LatencyHistogram {
  /** Since start. */
  minMs = Number.POSITIVE_INFINITY;
  maxMs = 0;
  #current: Window | undefined;
  #previous: Window | undefined;

  constructor(readonly windowMs: number = DEFAULT_OBSERVABILITY_CONFIG.statsWindowMs) {
    super();
  }

  override observe(ms: number): void {
    super.observe(ms);
    if (ms < this.minMs) this.minMs = ms;
    if (ms > this.maxMs) this.maxMs = ms;
    this.#windowAt(tickMonotonic()).add(ms);
  }

  /** Min, max and mean since start. */
  overall(): LatencyFigures {
    return figuresOf(this.count, this.sumMs, this.minMs, this.maxMs);
  }

  /**
   * The window being filled and the whole one before it, as of now (a window whose time is over is
   * reported as the previous one; none when it saw no calls).
   */
  windows(now: number = performance.now()): { current?: WindowFigures; previous?: WindowFigures } {
    let current = this.#current;
    let previous = this.#previous;
    if (current !== undefined && now - current.start >= this.windowMs) {
      previous = now - current.start >= 2 * this.windowMs ? undefined : current;
      current = undefined;
    }
    return {
      ...(current === undefined ? {} : { current: this.#figures(current, undefined) }),
      ...(previous === undefined ? {} : { previous: this.#figures(previous, this.windowMs) }),
    };
  }

  #figures(window: Window, length: number | undefined): WindowFigures {
    const end = length === undefined ? Date.now() : window.startTime + length;
    return {
      startTime: window.startTime,
      endTime: end,
      ...figuresOf(window.calls, window.sumMs, window.minMs, window.maxMs),
    };
  }

  #windowAt(now: number): Window {
    const current = this.#current;
    if (current !== undefined && now - current.start < this.windowMs) return current;
    let start = now;
    if (current !== undefined) {
      // back to back: the window `now` falls in, counted from the first
      const elapsed = now - current.start;
      const skipped = Math.floor(elapsed / this.windowMs);
      start = current.start + skipped * this.windowMs;
      this.#previous = skipped === 1 ? current : undefined;
    }
    const next = new Window(start, tickNow() - (now - start));
    this.#current = next;
    return next;
  }
}

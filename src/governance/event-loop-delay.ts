/**
 * The event loop's delay, for the adaptive concurrency limit: how late the loop runs what is ready (a
 * request's bytes included), from `perf_hooks.monitorEventLoopDelay`. Read at most every `everyMs`: the
 * mean delay since the last read (what the histogram recorded, less its resolution), then the histogram
 * starts again. The histogram is enabled at the first read; its timer does not keep the process alive;
 * `close()` stops it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopDelay {
  /** The mean delay, ms, over the period before the last read (at most `everyMs` old). */
  delayMs(nowMs: number): number;
  close(): void;
}

const RESOLUTION_MS = 10;

export function createEventLoopDelay(everyMs = 100): EventLoopDelay {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let enabled = false;
  let readAt = 0;
  let delay = 0;
  return {
    delayMs(nowMs) {
      // started at the first read: an app that serves nothing pays nothing
      if (!enabled) {
        enabled = histogram.enable();
        readAt = nowMs;
        return delay;
      }
      if (nowMs - readAt < everyMs) return delay;
      readAt = nowMs;
      const mean = histogram.count > 0 ? histogram.mean / 1e6 : 0;
      delay = Math.max(0, mean - RESOLUTION_MS);
      histogram.reset();
      return delay;
    },
    close() {
      if (enabled) histogram.disable();
      enabled = false;
    },
  };
}

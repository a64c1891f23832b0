/**
 * Slow peers: once a frame has started to arrive it must be complete within `frameTimeoutMs`, or the
 * connection is closed (a frame kept alive by one byte a second would otherwise hold its buffer, and a
 * share of the partial-frame budget, for ever). Both ends use it.
 *
 * Cheap on the hot path: `observe()` runs once per chunk (two comparisons), and at most one timer per
 * connection exists, armed when an incomplete frame is first seen and re-armed when it fires while
 * frames keep arriving. The decoder's frame counter tells whether the incomplete frame at the end of a
 * chunk is still the one first seen.
 */
import type { FrameDecoder } from './frame-decoder.js';

export interface FrameDeadline {
  /** Call after every chunk was pushed into the decoder; `now` is Date.now(). */
  observe(now: number): void;
  stop(): void;
}

export function startFrameDeadline(
  decoder: FrameDecoder,
  timeoutMs: number,
  onSlow: (elapsedMs: number, bufferedBytes: number) => void,
): FrameDeadline {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** The decoder's frame count when the incomplete frame being watched was first seen, and when. */
  let watchedFrames = -1;
  let since = 0;

  const arm = (delayMs: number): void => {
    timer = setTimeout(fire, Math.max(1, delayMs));
    timer.unref();
  };

  const fire = (): void => {
    timer = undefined;
    if (stopped || decoder.bufferedBytes === 0) return;
    const elapsed = Date.now() - since;
    if (elapsed >= timeoutMs) onSlow(elapsed, decoder.bufferedBytes);
    else arm(timeoutMs - elapsed);
  };

  return {
    observe(now) {
      if (decoder.bufferedBytes === 0) return;
      if (decoder.frames !== watchedFrames) {
        watchedFrames = decoder.frames;
        since = now;
      }
      if (timer === undefined && !stopped) arm(timeoutMs - (now - since));
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

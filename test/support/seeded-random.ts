/**
 * A tiny seeded PRNG (mulberry32) for reproducible statistical tests: the same seed gives the same
 * sequence of draws in [0, 1) on every run and platform.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A manual clock for tests: `now()` returns the current time, `advance(ms)` moves it. */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function manualClock(start = 1_000_000): ManualClock {
  let time = start;
  return {
    now: () => time,
    advance(ms) {
      time += ms;
    },
    set(ms) {
      time = ms;
    },
  };
}

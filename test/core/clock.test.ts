/**
 * The consumer's clock (core/clock.ts): read once per synchronous run, so a run that starts hundreds of
 * calls and reads hundreds of answers makes two clock calls, not ten per call; the next run reads again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tickMonotonic, tickNow } from '../../src/core/clock.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Lets the current run end (and every microtask queued before this call run). */
const nextRun = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the tick clock', () => {
  it('gives every read of one synchronous run the same values, and reads again in the next run', async () => {
    await nextRun();
    const wall = vi.spyOn(Date, 'now').mockReturnValue(1_000);
    const monotonic = vi.spyOn(performance, 'now').mockReturnValue(5);
    expect(tickNow()).toBe(1_000);
    wall.mockReturnValue(2_000);
    monotonic.mockReturnValue(9);
    expect(tickNow()).toBe(1_000);
    expect(tickMonotonic()).toBe(5);
    expect(wall).toHaveBeenCalledTimes(1);
    expect(monotonic).toHaveBeenCalledTimes(1);
    await Promise.resolve();
    expect(tickMonotonic()).toBe(9);
    expect(tickNow()).toBe(2_000);
    expect(wall).toHaveBeenCalledTimes(2);
  });

  it('follows the real clocks from run to run', async () => {
    await nextRun();
    const wall = tickNow();
    const monotonic = tickMonotonic();
    while (Date.now() < wall + 3) {
      // spin: the clocks move, this run's reading does not
    }
    expect(tickNow()).toBe(wall);
    expect(tickMonotonic()).toBe(monotonic);
    await nextRun();
    expect(tickNow()).toBeGreaterThanOrEqual(wall + 3);
    expect(tickMonotonic()).toBeGreaterThan(monotonic);
  });
});

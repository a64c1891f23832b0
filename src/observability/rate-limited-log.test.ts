import { describe, expect, it } from 'vitest';
import { createRateLimitedLog } from './rate-limited-log.js';

describe('rate-limited log', () => {
  it('logs the first event of a kind at once, then one line per interval with the count it skipped', () => {
    let now = 0;
    const lines: string[] = [];
    const log = createRateLimitedLog(
      (line) => lines.push(line),
      1_000,
      () => now,
    );
    log.warn('refused', 'from a');
    log.warn('refused', 'from b');
    log.warn('refused', 'from c');
    log.warn('protocol', 'closed d');
    now = 1_000;
    log.warn('refused', 'from e');
    expect(lines).toEqual(['from a', 'closed d', 'from e (2 more like it not logged)']);
  });
});

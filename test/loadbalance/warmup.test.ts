import { describe, expect, it } from 'vitest';
import { createRandomLoadBalancer } from '../../src/loadbalance/random.js';
import { warmupWeight } from '../../src/loadbalance/warmup.js';
import { endpoint, shares, testOptions } from './helpers.js';

const WARMUP = 600_000;
const NOW = 10_000_000;

describe('warmupWeight', () => {
  it('ramps linearly from 1 to the full weight over the warm-up period (Dubbo formula)', () => {
    expect(warmupWeight(100, NOW - 60_000, NOW, WARMUP)).toBe(10);
    expect(warmupWeight(100, NOW - 300_000, NOW, WARMUP)).toBe(50);
    expect(warmupWeight(100, NOW - 599_999, NOW, WARMUP)).toBe(99);
    expect(warmupWeight(100, NOW - 600_000, NOW, WARMUP)).toBe(100);
    expect(warmupWeight(100, NOW - 10_000_000 + 1, NOW, WARMUP)).toBe(100);
  });

  it('is never below 1 nor above the weight', () => {
    expect(warmupWeight(100, NOW, NOW, WARMUP)).toBe(1);
    expect(warmupWeight(100, NOW - 1, NOW, WARMUP)).toBe(1);
    expect(warmupWeight(3, NOW - 599_000, NOW, WARMUP)).toBe(2);
    expect(warmupWeight(0.5, NOW - 1, NOW, WARMUP)).toBe(0.5);
    let previous = 0;
    for (let uptime = 0; uptime <= WARMUP + 1000; uptime += 7_919) {
      const w = warmupWeight(250, NOW - uptime, NOW, WARMUP);
      expect(w).toBeGreaterThanOrEqual(1);
      expect(w).toBeLessThanOrEqual(250);
      expect(w).toBeGreaterThanOrEqual(previous);
      previous = w;
    }
  });

  it('treats start time 0 as unknown (full weight), a future start as 1, weight 0 as never', () => {
    expect(warmupWeight(100, 0, NOW, WARMUP)).toBe(100);
    expect(warmupWeight(100, NOW + 5_000, NOW, WARMUP)).toBe(1);
    expect(warmupWeight(0, NOW - 1, NOW, WARMUP)).toBe(0);
    expect(warmupWeight(-5, 0, NOW, WARMUP)).toBe(0);
    expect(warmupWeight(100, NOW - 1, NOW, 0)).toBe(100);
  });

  it('a warming provider gets a share proportional to its ramped weight, rising as time passes', () => {
    let now = NOW;
    const options = testOptions(7, { now: () => now });
    const balancer = createRandomLoadBalancer(options);
    const list = [endpoint('a:1'), endpoint('b:1'), endpoint('new:1', 100, { startTime: NOW - 120_000 })];
    // 2 minutes into 10: weight 20 against 100 + 100.
    expect(shares(balancer, list)['new:1']).toBeCloseTo(20 / 220, 1);
    now = NOW + 180_000; // 5 minutes in: 50.
    expect(shares(balancer, list)['new:1']).toBeCloseTo(50 / 250, 1);
    now = NOW + 600_000; // warm.
    expect(shares(balancer, list)['new:1']).toBeCloseTo(1 / 3, 1);
  });
});

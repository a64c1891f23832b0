import { describe, expect, it } from 'vitest';
import { createEndpointStats, resolveEndpointStatsOptions } from '../../src/loadbalance/endpoint-stats.js';
import { createWindowCounter } from '../../src/loadbalance/window-counter.js';
import { manualClock } from '../support/seeded-random.js';

describe('endpoint stats', () => {
  it('counts calls in flight', () => {
    const stats = createEndpointStats({ now: manualClock().now });
    stats.begin();
    stats.begin();
    expect(stats.active).toBe(2);
    stats.end(5, true);
    expect(stats.active).toBe(1);
    stats.end(5, true);
    stats.end(5, true); // an unmatched end never drives the counter negative
    expect(stats.active).toBe(0);
  });

  it('averages latency over successful calls and heartbeats; errors count in the rate only', () => {
    const stats = createEndpointStats({ now: manualClock().now });
    expect(stats.meanLatencyMs).toBe(0);
    expect(stats.errorRate).toBe(0);
    stats.end(10, true);
    stats.end(20, true);
    stats.end(1, false);
    stats.end(1, false);
    expect(stats.meanLatencyMs).toBe(15);
    expect(stats.samples).toBe(4);
    expect(stats.errorRate).toBe(0.5);
    stats.recordLatency(30);
    expect(stats.meanLatencyMs).toBe(20);
    expect(stats.samples).toBe(4);
  });

  it('keeps only the last windowSize samples', () => {
    const stats = createEndpointStats({ windowSize: 4, now: manualClock().now });
    for (const ms of [100, 100, 100, 100, 1, 2, 3, 4]) stats.end(ms, true);
    expect(stats.meanLatencyMs).toBe(2.5);
    expect(stats.samples).toBe(4);
    for (let i = 0; i < 4; i++) stats.end(0, false);
    expect(stats.errorRate).toBe(1);
    expect(stats.meanLatencyMs).toBe(0);
  });

  it('drops samples older than windowMs', () => {
    const clock = manualClock();
    const stats = createEndpointStats({ windowMs: 10_000, readsPerClockCheck: 1, now: clock.now });
    stats.end(50, true);
    clock.advance(6_000);
    stats.end(10, false);
    stats.end(10, true);
    expect(stats.meanLatencyMs).toBe(30);
    clock.advance(4_001);
    expect(stats.meanLatencyMs).toBe(10);
    expect(stats.errorRate).toBe(0.5);
    clock.advance(6_000);
    expect(stats.samples).toBe(0);
    expect(stats.meanLatencyMs).toBe(0);
  });

  it('by default consults the clock on reads only every 16 reads (and on every write)', () => {
    const clock = manualClock();
    const stats = createEndpointStats({ windowMs: 10_000, now: clock.now });
    stats.end(50, true);
    expect(stats.meanLatencyMs).toBe(50);
    clock.advance(10_001);
    const reads: number[] = [];
    for (let i = 0; i < 16; i++) reads.push(stats.meanLatencyMs);
    expect(reads.at(-1)).toBe(0);
    stats.end(10, true);
    clock.advance(10_001);
    stats.recordLatency(4);
    expect(stats.meanLatencyMs).toBe(4);
  });

  it('does not drift over millions of samples', () => {
    const stats = createEndpointStats({ windowSize: 64, windowMs: 0, now: manualClock().now });
    for (let i = 0; i < 1_000_000; i++) stats.end(i % 2 === 0 ? 0.1 : 1e6, true);
    for (let i = 0; i < 64; i++) stats.end(0.3, true);
    expect(stats.meanLatencyMs).toBeCloseTo(0.3, 12);
  });

  it('ignores invalid latencies and validates options', () => {
    const stats = createEndpointStats({ now: manualClock().now });
    stats.end(Number.NaN, true);
    stats.end(-5, true);
    stats.end(9, true);
    expect(stats.meanLatencyMs).toBe(3);
    expect(() => resolveEndpointStatsOptions({ windowSize: 0 })).toThrow(/windowSize/);
    expect(() => resolveEndpointStatsOptions({ windowMs: -1 })).toThrow(/windowMs/);
  });

  it('reset forgets samples but not calls in flight', () => {
    const stats = createEndpointStats({ now: manualClock().now });
    stats.begin();
    stats.end(5, false);
    stats.begin();
    stats.reset();
    expect(stats.samples).toBe(0);
    expect(stats.active).toBe(1);
  });
});

describe('window counter', () => {
  it('sums over the last windowMs in buckets, forgetting old buckets', () => {
    const counter = createWindowCounter(10_000, 10, 2);
    counter.add(0, 5, 0);
    counter.add(1, 1, 500);
    counter.add(0, 3, 4_000);
    expect(counter.sum(0, 9_999)).toBe(8);
    expect(counter.sum(0, 10_000)).toBe(3); // the first bucket [0, 1000) left the window
    expect(counter.sum(1, 10_000)).toBe(0);
    expect(counter.sum(0, 14_000)).toBe(0);
    counter.add(0, 2, 100_000);
    expect(counter.sum(0, 100_000)).toBe(2);
    counter.add(0, 1, 99_000); // clock went back: counted in the current bucket
    expect(counter.sum(0, 100_000)).toBe(3);
    counter.clear();
    expect(counter.sum(0, 100_000)).toBe(0);
  });
});

/**
 * The two estimators behind overload protection, on a scripted clock: a method's learnt service time
 * (governance/service-time.ts) and a provider endpoint's adaptive throttle (cluster/adaptive-throttle.ts).
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveThrottle } from '../../src/cluster/adaptive-throttle.js';
import { createServiceTime } from '../../src/governance/service-time.js';

describe('service time', () => {
  it('has no estimate until 16 samples, then the 10th percentile of the last 32', () => {
    const time = createServiceTime();
    for (let i = 0; i < 15; i++) time.record(100, i);
    expect(time.expectedMs(15)).toBe(0);
    time.record(100, 15);
    expect(time.expectedMs(16)).toBe(100);
    // a slow tail does not move it: 3 slow calls of 32
    const mixed = createServiceTime();
    for (let i = 0; i < 29; i++) mixed.record(50, i);
    for (let i = 0; i < 3; i++) mixed.record(5_000, 29 + i);
    expect(mixed.expectedMs(40)).toBe(50);
  });

  it('follows a method that became faster within the window, and forgets samples older than 10 s', () => {
    const time = createServiceTime();
    for (let i = 0; i < 32; i++) time.record(200, i);
    expect(time.expectedMs(32)).toBe(200);
    for (let i = 0; i < 32; i++) time.record(20, 100 + i);
    expect(time.expectedMs(140)).toBe(20);
    // nothing new for 10 s (every call refused): no estimate, every call admitted again
    expect(time.expectedMs(140 + 10_001)).toBe(0);
  });
});

describe('adaptive throttle', () => {
  it('refuses nothing while the provider accepts, nor below 20 requests', () => {
    const throttle = createAdaptiveThrottle({ now: () => 0, random: () => 0 });
    for (let i = 0; i < 19; i++) throttle.record(false);
    expect(throttle.refusalProbability(2)).toBe(0);
    expect(throttle.refuse(2)).toBe(false);
    const healthy = createAdaptiveThrottle({ now: () => 0, random: () => 0 });
    for (let i = 0; i < 1_000; i++) healthy.record(true);
    expect(healthy.refusalProbability(2)).toBe(0);
  });

  it('refuses with probability (requests − K·accepts) / (requests + 1), counting its refusals as requests', () => {
    let random = 0.99;
    const throttle = createAdaptiveThrottle({ now: () => 0, random: () => random });
    // 30 answered, 10 accepted: (30 - 2·10) / 31
    for (let i = 0; i < 30; i++) throttle.record(i < 10);
    expect(throttle.refusalProbability(2)).toBeCloseTo(10 / 31);
    expect(throttle.refusalProbability(1)).toBeCloseTo(20 / 31);
    expect(throttle.refuse(2)).toBe(false);
    random = 0.1;
    expect(throttle.refuse(2)).toBe(true);
    // the refused attempt is a request: (31 - 20) / 32
    expect(throttle.refusalProbability(2)).toBeCloseTo(11 / 32);
  });

  it('forgets what is older than its 2-minute window', () => {
    let now = 0;
    const throttle = createAdaptiveThrottle({ now: () => now, random: () => 0 });
    for (let i = 0; i < 50; i++) throttle.record(false);
    expect(throttle.refusalProbability(2)).toBeCloseTo(50 / 51);
    now = 130_000;
    expect(throttle.refusalProbability(2)).toBe(0);
  });
});

describe('deadline-aware admission probes while it refuses everything', () => {
  it('admits one call every probeEveryMs once it has refused for that long, so the estimate keeps learning', () => {
    const st = createServiceTime();
    for (let i = 0; i < 16; i++) st.record(500, i);
    expect(st.expectedMs(20)).toBe(500);
    expect(st.admits(600, 20)).toBe(true);
    // refused from 30 on; the first probe 100 ms later, then one every 100 ms
    expect(st.admits(100, 30)).toBe(false);
    expect(st.admits(100, 90)).toBe(false);
    expect(st.admits(100, 130)).toBe(true);
    expect(st.admits(100, 140)).toBe(false);
    expect(st.admits(100, 231)).toBe(true);
    // a call with budget enough ends the refusing
    expect(st.admits(600, 240)).toBe(true);
    expect(st.admits(100, 250)).toBe(false);
  });
});

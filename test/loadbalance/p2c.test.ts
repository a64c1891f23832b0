import { describe, expect, it } from 'vitest';
import { createP2cLoadBalancer } from '../../src/loadbalance/p2c.js';
import { endpoint, invocation, shares, testOptions } from './helpers.js';

describe('p2c', () => {
  it('never picks the most loaded of three; the least loaded wins whenever drawn', () => {
    const balancer = createP2cLoadBalancer(testOptions(1));
    const list = [
      endpoint('idle', 100, { active: 0 }),
      endpoint('busy', 100, { active: 5 }),
      endpoint('hot', 100, { active: 10 }),
    ];
    const result = shares(balancer, list);
    // idle is in 2 of the 3 equally likely pairs, busy wins only the pair {busy, hot}.
    expect(result['hot']).toBe(0);
    expect(Math.abs(result['idle']! - 2 / 3)).toBeLessThan(0.02);
    expect(Math.abs(result['busy']! - 1 / 3)).toBeLessThan(0.02);
  });

  it('draws two distinct endpoints, weighted', () => {
    const balancer = createP2cLoadBalancer(testOptions(2));
    // Equal load: the first drawn wins, so shares follow the weights.
    const list = [endpoint('a', 100), endpoint('b', 300)];
    expect(Math.abs(shares(balancer, list)['b']! - 0.75)).toBeLessThan(0.02);
    // Two endpoints: both are always drawn, so the less loaded always wins, whatever the weights.
    list[1]!.stats.active = 1;
    expect(shares(balancer, list, 1_000)).toEqual({ a: 1, b: 0 });
  });

  it('breaks equal load by latency, a provider without samples counting as the fastest', () => {
    const balancer = createP2cLoadBalancer(testOptions(3));
    const list = [endpoint('slow', 100, { meanLatencyMs: 30 }), endpoint('fast', 100, { meanLatencyMs: 3 })];
    expect(shares(balancer, list, 1_000)).toEqual({ slow: 0, fast: 1 });
    // new counts as 3 ms (the fastest measured): it beats slow and ties with fast.
    const withNew = [
      endpoint('slow', 100, { meanLatencyMs: 30 }),
      endpoint('fast', 100, { meanLatencyMs: 3 }),
      endpoint('new', 100),
    ];
    const result = shares(balancer, withNew);
    expect(result['slow']).toBe(0);
    expect(Math.abs(result['new']! - 0.5)).toBeLessThan(0.02);
  });

  it('handles one endpoint, and a single positive weight', () => {
    const balancer = createP2cLoadBalancer(testOptions(4));
    const only = endpoint('a');
    expect(balancer.select([only], invocation())).toBe(only);
    expect(shares(balancer, [endpoint('off', 0), endpoint('on', 100, { active: 50 })], 100)).toEqual({
      off: 0,
      on: 1,
    });
  });

  it('applies warm-up to the contest too: of two, one a tenth into its warm-up gets about 1 %, not 9 %', () => {
    // the test clock stands at 1 000 000 ms; warm-up 600 000 ms: 60 000 ms of uptime is a tenth
    const balancer = createP2cLoadBalancer(testOptions(5));
    const list = [endpoint('warm', 100), endpoint('cold', 100, { startTime: 1_000_000 - 60_000 })];
    const result = shares(balancer, list);
    // drawn first 10 times in 110 (weight 10 against 100), then kept in with probability 0.1: ~0.9 %
    // (the draw alone, with both always drawn and tied, would give it 9 %)
    expect(result['cold']!).toBeGreaterThan(0);
    expect(result['cold']!).toBeLessThan(0.03);
  });

  it('weighs the load a provider reports: an overloaded one loses to an equal one that is not', () => {
    const balancer = createP2cLoadBalancer(testOptions(6));
    const busy = endpoint('busy', 100, { meanLatencyMs: 5 });
    const calm = endpoint('calm', 100, { meanLatencyMs: 5 });
    Object.assign(busy.stats, {
      load: { inflight: 90, limit: 100, queued: 0, loopDelayMs: 30, overloaded: true },
    });
    Object.assign(calm.stats, { active: 1 });
    // calm: 5 x 2 = 10; busy: 5 x 1 x (1 + 0.9 + 1) = 14.5
    expect(shares(balancer, [busy, calm], 1_000)).toEqual({ busy: 0, calm: 1 });
  });

  it('reads the peak EWMA before the mean', () => {
    const balancer = createP2cLoadBalancer(testOptions(7));
    const spiky = endpoint('spiky', 100, { meanLatencyMs: 2 });
    Object.assign(spiky.stats, { peakLatencyMs: 40 });
    const steady = endpoint('steady', 100, { meanLatencyMs: 10 });
    expect(shares(balancer, [spiky, steady], 1_000)).toEqual({ spiky: 0, steady: 1 });
  });
});

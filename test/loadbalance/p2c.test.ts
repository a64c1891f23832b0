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
});

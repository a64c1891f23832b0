import { describe, expect, it } from 'vitest';
import { createShortestResponseLoadBalancer } from '../../src/loadbalance/shortest-response.js';
import { endpoint, shares, testOptions } from './helpers.js';

describe('shortestresponse', () => {
  it('prefers the provider with the smallest latency x (active + 1)', () => {
    const balancer = createShortestResponseLoadBalancer(testOptions(1));
    // Expected waits: a 10*(2+1)=30, b 5*(6+1)=35, c 20*(0+1)=20.
    const list = [
      endpoint('a', 100, { meanLatencyMs: 10, active: 2 }),
      endpoint('b', 100, { meanLatencyMs: 5, active: 6 }),
      endpoint('c', 100, { meanLatencyMs: 20, active: 0 }),
    ];
    expect(shares(balancer, list, 1_000)).toEqual({ a: 0, b: 0, c: 1 });
    list[2]!.stats.active = 1; // c now 40: a (30) is best
    expect(shares(balancer, list, 1_000)).toEqual({ a: 1, b: 0, c: 0 });
  });

  it('treats a provider with no samples as the fastest measured one, so it gets tried', () => {
    const balancer = createShortestResponseLoadBalancer(testOptions(2));
    const list = [
      endpoint('fast', 100, { meanLatencyMs: 4 }),
      endpoint('slow', 100, { meanLatencyMs: 40 }),
      endpoint('new', 100),
    ];
    const result = shares(balancer, list);
    expect(result['slow']).toBe(0);
    expect(Math.abs(result['new']! - 0.5)).toBeLessThan(0.02);
    list[2]!.stats.active = 1; // 4 * 2 = 8 > 4: no longer tied
    expect(shares(balancer, list, 1_000)).toEqual({ fast: 1, slow: 0, new: 0 });
  });

  it('orders by calls in flight when nothing is measured anywhere', () => {
    const balancer = createShortestResponseLoadBalancer(testOptions(3));
    const list = [endpoint('a', 100, { active: 2 }), endpoint('b', 100, { active: 1 })];
    expect(shares(balancer, list, 1_000)).toEqual({ a: 0, b: 1 });
  });

  it('breaks ties by weighted random', () => {
    const balancer = createShortestResponseLoadBalancer(testOptions(4));
    const list = [endpoint('a', 100, { meanLatencyMs: 8 }), endpoint('b', 300, { meanLatencyMs: 8 })];
    const result = shares(balancer, list);
    expect(Math.abs(result['b']! - 0.75)).toBeLessThan(0.02);
  });
});

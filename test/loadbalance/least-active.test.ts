import { describe, expect, it } from 'vitest';
import { createLeastActiveLoadBalancer } from '../../src/loadbalance/least-active.js';
import { endpoint, invocation, shares, testOptions } from './helpers.js';

describe('leastactive', () => {
  it('picks the endpoint with the fewest calls in flight', () => {
    const balancer = createLeastActiveLoadBalancer(testOptions(1));
    const list = [
      endpoint('a', 100, { active: 3 }),
      endpoint('b', 100, { active: 1 }),
      endpoint('c', 500, { active: 2 }),
    ];
    expect(shares(balancer, list, 1_000)).toEqual({ a: 0, b: 1, c: 0 });
  });

  it('breaks ties by weight (weighted random among the tied)', () => {
    const balancer = createLeastActiveLoadBalancer(testOptions(2));
    const list = [
      endpoint('a', 100, { active: 1 }),
      endpoint('b', 300, { active: 1 }),
      endpoint('c', 900, { active: 2 }),
      endpoint('d', 100, { active: 1 }),
    ];
    const result = shares(balancer, list);
    expect(result['c']).toBe(0);
    expect(Math.abs(result['a']! - 0.2)).toBeLessThan(0.02);
    expect(Math.abs(result['b']! - 0.6)).toBeLessThan(0.02);
    expect(Math.abs(result['d']! - 0.2)).toBeLessThan(0.02);
  });

  it('spreads evenly among equal ties and uses warmed-up weights', () => {
    const now = 90_000_000;
    const even = shares(createLeastActiveLoadBalancer(testOptions(3)), [endpoint('a'), endpoint('b')]);
    expect(Math.abs(even['a']! - 0.5)).toBeLessThan(0.02);
    const warming = shares(createLeastActiveLoadBalancer(testOptions(4, { now: () => now })), [
      endpoint('a'),
      endpoint('cold', 100, { startTime: now - 60_000 }),
    ]);
    expect(Math.abs(warming['cold']! - 10 / 110)).toBeLessThan(0.02);
  });

  it('follows the counters as they change', () => {
    const balancer = createLeastActiveLoadBalancer(testOptions(5));
    const list = [endpoint('a'), endpoint('b'), endpoint('c')];
    // Simulate calls that never complete: each pick adds one in flight, so picks rotate over all three.
    const picked: string[] = [];
    for (let i = 0; i < 30; i++) {
      const e = balancer.select(list, invocation());
      e.stats.active++;
      picked.push(e.address);
    }
    for (const e of list) expect(e.stats.active).toBe(10);
    expect(picked.filter((p) => p === 'a')).toHaveLength(10);
  });

  it('ignores weight 0 even when it is the least active', () => {
    const balancer = createLeastActiveLoadBalancer(testOptions(6));
    const list = [endpoint('off', 0, { active: 0 }), endpoint('on', 100, { active: 9 })];
    expect(shares(balancer, list, 100)).toEqual({ off: 0, on: 1 });
  });
});

import { describe, expect, it } from 'vitest';
import { createRandomLoadBalancer } from '../../src/loadbalance/random.js';
import { endpoint, invocation, shares, testOptions } from './helpers.js';

const TOLERANCE = 0.02;

describe('random', () => {
  it('spreads evenly when weights are equal', () => {
    const list = ['a', 'b', 'c', 'd', 'e'].map((a) => endpoint(`${a}:1`));
    const result = shares(createRandomLoadBalancer(testOptions(1)), list);
    for (const share of Object.values(result)) expect(Math.abs(share - 0.2)).toBeLessThan(TOLERANCE);
  });

  it('respects weights', () => {
    const list = [endpoint('a:1', 100), endpoint('b:1', 200), endpoint('c:1', 300), endpoint('d:1', 400)];
    const result = shares(createRandomLoadBalancer(testOptions(2)), list);
    expect(Math.abs(result['a:1']! - 0.1)).toBeLessThan(TOLERANCE);
    expect(Math.abs(result['b:1']! - 0.2)).toBeLessThan(TOLERANCE);
    expect(Math.abs(result['c:1']! - 0.3)).toBeLessThan(TOLERANCE);
    expect(Math.abs(result['d:1']! - 0.4)).toBeLessThan(TOLERANCE);
  });

  it('never picks weight 0, unless every weight is 0 (then evenly)', () => {
    const balancer = createRandomLoadBalancer(testOptions(3));
    const some = shares(balancer, [endpoint('a:1', 0), endpoint('b:1', 100), endpoint('c:1', 0)]);
    expect(some).toEqual({ 'a:1': 0, 'b:1': 1, 'c:1': 0 });
    const none = shares(balancer, [endpoint('a:1', 0), endpoint('b:1', 0)]);
    expect(Math.abs(none['a:1']! - 0.5)).toBeLessThan(TOLERANCE);
  });

  it('returns the only endpoint without drawing', () => {
    let draws = 0;
    const balancer = createRandomLoadBalancer(
      testOptions(4, {
        random: () => {
          draws++;
          return 0.5;
        },
      }),
    );
    const only = endpoint('a:1');
    expect(balancer.select([only], invocation())).toBe(only);
    expect(draws).toBe(0);
  });

  it('maps the edges of the random range to valid endpoints', () => {
    const list = [endpoint('a:1', 1), endpoint('b:1', 3)];
    expect(
      createRandomLoadBalancer(testOptions(0, { random: () => 0 })).select(list, invocation()).address,
    ).toBe('a:1');
    const top = createRandomLoadBalancer(testOptions(0, { random: () => 1 - Number.EPSILON }));
    expect(top.select(list, invocation()).address).toBe('b:1');
    const even = [endpoint('a:1'), endpoint('b:1')];
    expect(
      createRandomLoadBalancer(testOptions(0, { random: () => 0.9999999999 })).select(even, invocation())
        .address,
    ).toBe('b:1');
  });
});

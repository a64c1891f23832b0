import { describe, expect, it } from 'vitest';
import { builtinExtensions } from '../../src/extend.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS, resolveLoadBalancerOptions } from '../../src/loadbalance/index.js';
import { endpoint, invocation, testOptions } from './helpers.js';

describe('built-in load balancers', () => {
  it('are registered under their names and all honour the contract', () => {
    const names = builtinExtensions.names('loadbalance').sort();
    expect(names).toEqual([
      'consistenthash',
      'leastactive',
      'p2c',
      'random',
      'roundrobin',
      'shortestresponse',
    ]);
    const list = [
      endpoint('a:1', 100),
      endpoint('b:1', 0),
      endpoint('c:1', 300, { active: 1, meanLatencyMs: 5 }),
    ];
    for (const name of names) {
      const balancer = builtinExtensions.get('loadbalance', name)(testOptions(9));
      for (let i = 0; i < 200; i++) {
        const picked = balancer.select(list, invocation([`k${i}`]));
        expect(list).toContain(picked);
        expect(picked.address).not.toBe('b:1');
      }
      expect(balancer.select([list[1]!], invocation(['x']))).toBe(list[1]);
    }
  });

  it('resolves options with defaults and clear errors', () => {
    expect(resolveLoadBalancerOptions()).toEqual(DEFAULT_LOAD_BALANCER_OPTIONS);
    expect(() => resolveLoadBalancerOptions({ virtualNodes: 0 })).toThrow(
      /loadbalance.virtualNodes = 0; expected an integer >= 1/,
    );
    expect(() => resolveLoadBalancerOptions({ hashArguments: [] })).toThrow(/hashArguments/);
    expect(() => resolveLoadBalancerOptions({ warmupMs: -1 })).toThrow(/warmupMs/);
  });
});

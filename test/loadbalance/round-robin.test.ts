import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRoundRobinLoadBalancer } from '../../src/loadbalance/round-robin.js';
import { endpoint, sequence, shares, testOptions } from './helpers.js';

describe('roundrobin (smooth weighted, nginx)', () => {
  it('gives the nginx sequence for {a:5, b:1, c:1}: a a b a c a a, repeating', () => {
    const balancer = createRoundRobinLoadBalancer(testOptions());
    const list = [endpoint('a', 5), endpoint('b', 1), endpoint('c', 1)];
    expect(sequence(balancer, list, 14).join(' ')).toBe('a a b a c a a a a b a c a a');
  });

  it('gives a b a c a for {a:3, b:1, c:1}', () => {
    const balancer = createRoundRobinLoadBalancer(testOptions());
    const list = [endpoint('a', 3), endpoint('b', 1), endpoint('c', 1)];
    expect(sequence(balancer, list, 10).join(' ')).toBe('a b a c a a b a c a');
  });

  it('rotates in list order when weights are equal', () => {
    const balancer = createRoundRobinLoadBalancer(testOptions());
    const list = [endpoint('a'), endpoint('b'), endpoint('c')];
    expect(sequence(balancer, list, 6).join(' ')).toBe('a b c a b c');
  });

  it('keeps state for remaining members and forgets those that left', () => {
    const balancer = createRoundRobinLoadBalancer(testOptions());
    const a = endpoint('a', 5);
    const b = endpoint('b', 1);
    const c = endpoint('c', 1);
    // a:5 b:1 c:1 -> currents after "a a b": a=1, b=-4, c=3.
    expect(sequence(balancer, [a, b, c], 3).join(' ')).toBe('a a b');
    // c leaves; a (1) and b (-4) keep their state: 6,-3 a; 5,-2 a; 4,-1 a; 3,0 a; 2,1 a; 1,2 b.
    expect(sequence(balancer, [a, b], 6).join(' ')).toBe('a a a a a b');
    // c comes back with a fresh 0 (its 3 was forgotten; had it been kept, the second pick would be c).
    expect(sequence(balancer, [a, b, c], 7).join(' ')).toBe('a a c a a a b');
  });

  it('matches a reference model of nginx across random list changes', () => {
    const addresses = ['a', 'b', 'c', 'd', 'e'];
    const step = fc.record({
      members: fc.subarray(addresses, { minLength: 1 }),
      weights: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 5, maxLength: 5 }),
      picks: fc.integer({ min: 1, max: 12 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const balancer = createRoundRobinLoadBalancer(testOptions());
        const model = new Map<string, number>();
        for (const { members, weights, picks } of steps) {
          const list = members.map((address) => endpoint(address, weights[addresses.indexOf(address)]!));
          for (const key of [...model.keys()]) if (!members.includes(key)) model.delete(key);
          for (let p = 0; p < picks; p++) {
            let total = 0;
            let best: string | undefined;
            for (const e of list) {
              if (!model.has(e.address)) model.set(e.address, 0);
              if (e.weight <= 0) continue;
              const current = model.get(e.address)! + e.weight;
              model.set(e.address, current);
              total += e.weight;
              if (best === undefined || current > model.get(best)!) best = e.address;
            }
            const picked = balancer.select(list, undefined as never).address;
            if (best === undefined) continue; // all weights 0: plain rotation, not modelled
            model.set(best, model.get(best)! - total);
            if (picked !== best) return false;
          }
        }
        return true;
      }),
      { seed: 1234, numRuns: 300 },
    );
  });

  it('gives exact weighted shares over a full cycle, with warm-up applied', () => {
    const now = 50_000_000;
    const balancer = createRoundRobinLoadBalancer(testOptions(1, { now: () => now }));
    const list = [
      endpoint('a', 100),
      endpoint('b', 300),
      endpoint('warm', 100, { startTime: now - 300_000 }),
    ];
    const result = shares(balancer, list, 4_500);
    expect(result['a']).toBeCloseTo(100 / 450, 3);
    expect(result['b']).toBeCloseTo(300 / 450, 3);
    expect(result['warm']).toBeCloseTo(50 / 450, 3);
  });

  it('never picks weight 0 among positive weights; rotates when all are 0', () => {
    const balancer = createRoundRobinLoadBalancer(testOptions());
    expect(sequence(balancer, [endpoint('a', 0), endpoint('b', 1), endpoint('c', 0)], 5)).toEqual(
      Array(5).fill('b'),
    );
    const zero = createRoundRobinLoadBalancer(testOptions());
    expect(sequence(zero, [endpoint('a', 0), endpoint('b', 0)], 4).join(' ')).toBe('a b a b');
  });
});

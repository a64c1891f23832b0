import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createConsistentHashLoadBalancer } from '../../src/loadbalance/consistent-hash.js';
import { hashKey, stableString } from '../../src/loadbalance/hash-key.js';
import { buildHashRing, ringHash, ringLookup, virtualNodeCount } from '../../src/loadbalance/hash-ring.js';
import { endpoint, invocation, type TestEndpoint, testOptions } from './helpers.js';

const KEYS = Array.from({ length: 10_000 }, (_, i) => `user-${i * 7919}`);

function owners(
  balancer: ReturnType<typeof createConsistentHashLoadBalancer>,
  list: TestEndpoint[],
): string[] {
  return KEYS.map((key) => balancer.select(list, invocation([key])).address);
}

/** N distinct provider addresses (plus one more), drawn by fast-check. */
const providerSets = fc.integer({ min: 3, max: 10 }).chain((n) =>
  fc.uniqueArray(
    fc
      .tuple(
        fc.integer({ min: 1, max: 254 }),
        fc.integer({ min: 1, max: 254 }),
        fc.integer({ min: 1024, max: 65535 }),
      )
      .map(([x, y, port]) => `10.${x}.${y}.1:${port}`),
    { minLength: n + 1, maxLength: n + 1 },
  ),
);

describe('consistenthash', () => {
  it('sends the same key to the same provider, whatever the list order', () => {
    const list = ['a:1', 'b:1', 'c:1', 'd:1'].map((a) => endpoint(a));
    const balancer = createConsistentHashLoadBalancer(testOptions());
    const first = owners(balancer, list);
    expect(owners(balancer, list)).toEqual(first);
    expect(owners(balancer, [...list].reverse())).toEqual(first);
    expect(owners(createConsistentHashLoadBalancer(testOptions()), list)).toEqual(first);
  });

  it('spreads keys evenly over equal weights', () => {
    const list = ['10.0.0.1:20880', '10.0.0.2:20880', '10.0.0.3:20880', '10.0.0.4:20880'].map((a) =>
      endpoint(a),
    );
    const counts = new Map<string, number>();
    for (const owner of owners(createConsistentHashLoadBalancer(testOptions()), list)) {
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const count of counts.values()) expect(Math.abs(count / KEYS.length - 0.25)).toBeLessThan(0.07);
  });

  it('moves about 1/(N+1) of the keys, all to the newcomer, when a provider joins', () => {
    fc.assert(
      fc.property(providerSets, (addresses) => {
        const list = addresses.slice(0, -1).map((a) => endpoint(a));
        const newcomer = endpoint(addresses.at(-1)!);
        const balancer = createConsistentHashLoadBalancer(testOptions());
        const before = owners(balancer, list);
        const after = owners(balancer, [...list, newcomer]);
        let moved = 0;
        for (let i = 0; i < KEYS.length; i++) {
          if (before[i] === after[i]) continue;
          if (after[i] !== newcomer.address) return false;
          moved++;
        }
        const expected = KEYS.length / (list.length + 1);
        return Math.abs(moved - expected) < 0.4 * expected;
      }),
      { seed: 20_880, numRuns: 25 },
    );
  });

  it('moves only the keys of a provider that leaves', () => {
    fc.assert(
      fc.property(providerSets, fc.nat(), (addresses, pick) => {
        const list = addresses.map((a) => endpoint(a));
        const leaving = list[pick % list.length]!;
        const balancer = createConsistentHashLoadBalancer(testOptions());
        const before = owners(balancer, list);
        const after = owners(
          balancer,
          list.filter((e) => e !== leaving),
        );
        for (let i = 0; i < KEYS.length; i++) {
          if (before[i] !== leaving.address && after[i] !== before[i]) return false;
          if (after[i] === leaving.address) return false;
        }
        return true;
      }),
      { seed: 4242, numRuns: 25 },
    );
  });

  it('gives a provider a share proportional to its weight', () => {
    const list = [endpoint('10.1.0.1:1', 100), endpoint('10.1.0.2:1', 100), endpoint('10.1.0.3:1', 200)];
    const counts: Record<string, number> = {};
    for (const owner of owners(createConsistentHashLoadBalancer(testOptions()), list)) {
      counts[owner] = (counts[owner] ?? 0) + 1;
    }
    expect(counts['10.1.0.3:1']! / KEYS.length).toBeGreaterThan(0.4);
    expect(counts['10.1.0.3:1']! / KEYS.length).toBeLessThan(0.6);
  });

  it('never picks weight 0, unless every weight is 0', () => {
    const balancer = createConsistentHashLoadBalancer(testOptions());
    const list = [endpoint('a:1', 0), endpoint('b:1', 100)];
    expect(new Set(owners(balancer, list))).toEqual(new Set(['b:1']));
    const zero = [endpoint('a:1', 0), endpoint('b:1', 0)];
    expect(new Set(owners(balancer, zero))).toEqual(new Set(['a:1', 'b:1']));
  });

  it('rebuilds the ring only when addresses or weights change', () => {
    const balancer = createConsistentHashLoadBalancer(testOptions());
    const list = [endpoint('a:1'), endpoint('b:1'), endpoint('c:1')];
    balancer.select(list, invocation(['k']));
    expect(balancer.ringBuilds).toBe(1);
    balancer.select(
      list.map((e) => ({ ...e })),
      invocation(['k']),
    );
    balancer.select([list[2]!, list[0]!, list[1]!], invocation(['k']));
    expect(balancer.ringBuilds).toBe(1);
    balancer.select([list[0]!, list[1]!, endpoint('c:1', 50)], invocation(['k']));
    expect(balancer.ringBuilds).toBe(2);
    balancer.select([list[0]!, list[1]!], invocation(['k']));
    expect(balancer.ringBuilds).toBe(3);
  });

  it('builds the key from the configured argument positions', () => {
    const list = ['a:1', 'b:1', 'c:1', 'd:1', 'e:1'].map((a) => endpoint(a));
    const balancer = createConsistentHashLoadBalancer(testOptions(1, { hashArguments: [1] }));
    const byFirst = new Set<string>();
    for (let i = 0; i < 200; i++) byFirst.add(balancer.select(list, invocation([`x${i}`, 'same'])).address);
    expect(byFirst.size).toBe(1);
    expect(hashKey(['a', 7, { y: 1, x: [true, null] }], [2, 0, 9])).toBe('{"x":[true,null],"y":1}a');
  });
});

describe('hash ring', () => {
  it('gives weight 100 exactly virtualNodes points, 4 per MD5 digest, proportional otherwise', () => {
    expect(virtualNodeCount(100, 160, false)).toBe(160);
    expect(virtualNodeCount(50, 160, false)).toBe(80);
    expect(virtualNodeCount(1, 160, false)).toBe(2);
    expect(virtualNodeCount(0.01, 160, false)).toBe(1);
    expect(virtualNodeCount(0, 160, false)).toBe(0);
    expect(virtualNodeCount(0, 160, true)).toBe(160);
    const ring = buildHashRing(
      [
        { address: 'a:1', weight: 100 },
        { address: 'b:1', weight: 25 },
        { address: 'c:1', weight: 3 },
      ],
      160,
    );
    expect(ring.points.length).toBe(160 + 40 + 5);
    for (let i = 1; i < ring.points.length; i++)
      expect(ring.points[i]!).toBeGreaterThanOrEqual(ring.points[i - 1]!);
    expect([...ring.owners].filter((o) => o === 2)).toHaveLength(5);
  });

  it('looks up the first point at or after the position, wrapping around', () => {
    const ring = { points: Uint32Array.of(10, 20, 30), owners: Uint32Array.of(0, 1, 2) };
    expect(ringLookup(ring, 0)).toBe(0);
    expect(ringLookup(ring, 10)).toBe(0);
    expect(ringLookup(ring, 11)).toBe(1);
    expect(ringLookup(ring, 30)).toBe(2);
    expect(ringLookup(ring, 31)).toBe(0);
    expect(ringLookup(ring, 0xffffffff)).toBe(0);
  });

  it('hashes keys to unsigned 32-bit positions, deterministically', () => {
    expect(ringHash('')).toBe(ringHash(''));
    expect(ringHash('abc')).not.toBe(ringHash('abd'));
    fc.assert(
      fc.property(fc.string(), (s) => {
        const h = ringHash(s);
        return Number.isInteger(h) && h >= 0 && h <= 0xffffffff && h === ringHash(s);
      }),
      { seed: 1 },
    );
  });

  it('stringifies arguments stably', () => {
    expect(stableString('x')).toBe('x');
    expect(stableString(42)).toBe('42');
    expect(stableString(10n)).toBe('10');
    expect(stableString(undefined)).toBe('undefined');
    expect(stableString({ b: 1, a: { d: 2, c: 3 } })).toBe(stableString({ a: { c: 3, d: 2 }, b: 1 }));
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(stableString(cyclic)).toBe('{"a":1,"self":"[Circular]"}');
  });
});

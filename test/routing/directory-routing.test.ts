/**
 * The routing stage inside a directory, without the network: each kind's behaviour on the six
 * providers, the kinds' precedence, the explanation of one call, and the promise that a directory with
 * no rule and no tagged provider skips the stage (no router, no allocation per selection).
 */
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { RpcError } from '../../src/index.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS } from '../../src/loadbalance/load-balancer.js';
import { createRandomLoadBalancer } from '../../src/loadbalance/random.js';
import type { RouteRule } from '../../src/routing/route-rule.js';
import { seededRandom } from '../support/seeded-random.js';
import { handFedDirectory, invocation, sixRecords } from './support.js';

const balancer = createRandomLoadBalancer({ ...DEFAULT_LOAD_BALANCER_OPTIONS, random: seededRandom(7) });
const IN_A = { application: 'web', host: 'h1', zone: 'a' };

/** Which providers (application names) `n` selections reach, with counts. */
function spread(hand: ReturnType<typeof handFedDirectory>, n: number, call = invocation()) {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const name = hand.directory.select(call, balancer).record!.application;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

const names = (counts: Record<string, number>) => Object.keys(counts).sort();

/** Bytes allocated while `run` runs (what the collections in between freed, plus the heap's growth). */
function allocatedBytes(run: () => void): number {
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  run();
  const after = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let freed = 0;
  for (const gc of statistics) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  }
  return after - before + freed;
}

describe('a directory without routing rules', () => {
  it('skips the stage: no router, and a selection allocates nothing more than the balancer alone', () => {
    const hand = handFedDirectory(IN_A);
    hand.setRecords(sixRecords(false));
    // a rule came and went: the stage compiled for it is gone again
    hand.setRoutes([{ name: 'z', kind: 'zone' }]);
    hand.setRoutes([]);
    expect(hand.directory.routing).toBeUndefined();
    const call = invocation();
    const list = hand.directory.selectable();
    // a balancer that allocates nothing whatever the compiler does with it (a random one may box its
    // doubles, depending on inlining and on what else runs): what is measured is the directory
    const balancer = { select: <E>(endpoints: readonly E[], _call?: unknown) => endpoints[0]! };
    const calls = 200_000;
    // warm both paths up first, so that what is measured is steady state
    for (let i = 0; i < 50_000; i++) {
      hand.directory.select(call, balancer);
      balancer.select(list, call);
    }
    const baseline = allocatedBytes(() => {
      for (let i = 0; i < calls; i++) balancer.select(hand.directory.selectable(), call);
    });
    const selected = allocatedBytes(() => {
      for (let i = 0; i < calls; i++) hand.directory.select(call, balancer);
    });
    // under 8 bytes per call more than the balancer alone: the smallest object, closure or array made
    // per call would be 16 or more (what is left is the compiler's noise, a fraction of a byte)
    expect((selected - baseline) / calls).toBeLessThan(8);
  });

  it('compiles a stage when a rule arrives and drops it when the last one goes', () => {
    const hand = handFedDirectory(IN_A);
    hand.setRecords(sixRecords(false));
    hand.setRoutes([{ name: 'z', kind: 'zone' }]);
    expect(hand.directory.routing?.routers.map((r) => r.kind)).toEqual(['zone']);
    hand.setRoutes([]);
    expect(hand.directory.routing).toBeUndefined();
    // tagged providers turn tag routing on by themselves
    hand.setRecords(sixRecords(true));
    expect(hand.directory.routing?.routers.map((r) => r.name)).toEqual(['(tags)']);
  });

  it('a steady condition rule allocates nothing per selection either (its result is kept per list)', () => {
    const hand = handFedDirectory(IN_A);
    hand.setRecords(sixRecords(false));
    // a rule that drops a provider (a filter that keeps all would return its input anyway)
    hand.setRoutes([{ name: 'c', kind: 'condition', rule: 'method = read => port != 1001' }]);
    const call = invocation();
    // a balancer that allocates nothing whatever the compiler does with it (a random one may box its
    // doubles, depending on inlining): what is measured is the routing stage
    const first = { select: <E>(list: readonly E[]) => list[0]! };
    for (let i = 0; i < 50_000; i++) hand.directory.select(call, first);
    const calls = 200_000;
    const bytes = allocatedBytes(() => {
      for (let i = 0; i < calls; i++) hand.directory.select(call, first);
    });
    expect(bytes / calls).toBeLessThan(8);
  });
});

describe('the routers on six providers', () => {
  const routed = (routes: RouteRule[], caller = IN_A) => {
    const hand = handFedDirectory(caller);
    hand.setRecords(sixRecords());
    hand.setRoutes(routes);
    return hand;
  };

  it('tag routing: tagged calls to their tag, else untagged; untagged calls to untagged providers', () => {
    const hand = routed([]);
    expect(names(spread(hand, 200, invocation('read', { 'callisto-tag': 'gray' })))).toEqual(['a3', 'b3']);
    expect(names(spread(hand, 400, invocation('read', { 'callisto-tag': 'blue' })))).toEqual([
      'a1',
      'a2',
      'b1',
      'b2',
    ]);
    expect(names(spread(hand, 400))).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('forced tag routing: a tag no provider has gets no provider', () => {
    const hand = routed([{ name: 'strict', kind: 'tag', force: true }]);
    expect(names(spread(hand, 100, invocation('read', { 'callisto-tag': 'gray' })))).toEqual(['a3', 'b3']);
    let error: unknown;
    try {
      hand.directory.select(invocation('read', { 'callisto-tag': 'blue' }), balancer);
    } catch (thrown) {
      error = thrown;
    }
    expect(RpcError.is(error) && error.code).toBe('NoProvider');
    expect((error as Error).message).toMatch(
      /rule strict left none .*the call's tag is blue, no provider has it \(forced: none\)/,
    );
  });

  it('condition rules: when => then, ignored when nothing matches unless forced; an empty then blocks', () => {
    const hand = routed([
      { name: 'v2-readers', kind: 'condition', rule: 'method = read & application = web => version = 2.*' },
    ]);
    // conditions come before tags: the v2 providers left are b2 (untagged) — a3 is tagged gray
    expect(names(spread(hand, 200))).toEqual(['b2']);
    expect(names(spread(hand, 400, invocation('write')))).toEqual(['a1', 'a2', 'b1', 'b2']);
    hand.setRoutes([{ name: 'not-v2', kind: 'condition', rule: 'method = read => version != 2.*' }]);
    expect(names(spread(hand, 400))).toEqual(['a1', 'a2', 'b1']);
    hand.setRoutes([{ name: 'none', kind: 'condition', rule: 'method = read => tags[rack] = r9' }]);
    expect(names(spread(hand, 400))).toEqual(['a1', 'a2', 'b1', 'b2']);
    hand.setRoutes([
      { name: 'none', kind: 'condition', rule: 'method = read => tags[rack] = r9', force: true },
    ]);
    expect(() => hand.directory.select(invocation(), balancer)).toThrow(/rule none left none/);
    hand.setRoutes([{ name: 'block', kind: 'condition', rule: 'arguments[0] = 13 =>' }]);
    expect(() => hand.directory.select(invocation('read', {}, [13]), balancer)).toThrow(/blocked/);
    expect(() => hand.directory.select(invocation('read', {}, [12]), balancer)).not.toThrow();
  });

  it('a 90/10 split is exact by turns, and sticky by a key', () => {
    const hand = routed([
      {
        name: 'canary',
        kind: 'weight',
        split: [
          { to: 'version = 1.*', weight: 90 },
          { to: 'version = 2.*', weight: 10 },
        ],
      },
    ]);
    const counts = spread(hand, 10_000);
    // untagged providers only: v1 are a1, a2, b1; v2 is b2
    expect((counts['a1'] ?? 0) + (counts['a2'] ?? 0) + (counts['b1'] ?? 0)).toBe(9_000);
    expect(counts['b2']).toBe(1_000);
    hand.setRoutes([
      {
        name: 'canary',
        kind: 'weight',
        stickyBy: 'attachments[user]',
        split: [
          { to: 'version = 1.*', weight: 90 },
          { to: 'version = 2.*', weight: 10 },
        ],
      },
    ]);
    let v2 = 0;
    for (let user = 0; user < 10_000; user++) {
      const call = invocation('read', { user: `u${user}` });
      const first = hand.directory.select(call, balancer).record!.tags['version'];
      for (let again = 0; again < 3; again++) {
        expect(hand.directory.select(call, balancer).record!.tags['version']).toBe(first);
      }
      if (first === '2.0.0') v2++;
    }
    // a hash of 10,000 keys: 10% within ±1.5 points
    expect(v2).toBeGreaterThan(850);
    expect(v2).toBeLessThan(1_150);
  });

  it('zone routing: local first, spill-over in proportion, everything elsewhere, panic', () => {
    const hand = routed([{ name: 'local', kind: 'zone', threshold: 0.7, panicThreshold: 0.3 }]);
    // untagged: a1, a2 local; b1, b2 remote
    expect(names(spread(hand, 400))).toEqual(['a1', 'a2']);
    hand.setAvailable(1001, false); // a1 down: local share 1/2 < 0.7 -> 0.5/0.7 stays
    const spilled = spread(hand, 7_000);
    expect(spilled['a2']).toBe(5_000);
    expect((spilled['b1'] ?? 0) + (spilled['b2'] ?? 0)).toBe(2_000);
    hand.setAvailable(1002, false); // no local provider healthy: all leave the zone
    expect(names(spread(hand, 400))).toEqual(['b1', 'b2']);
    // panic: 2 of 6 healthy (b3 and a3 down too) is below 0.5: every healthy one, whatever its zone
    hand.setRoutes([{ name: 'local', kind: 'zone', threshold: 0.7, panicThreshold: 0.8 }]);
    hand.setAvailable(1002, true);
    expect(names(spread(hand, 400))).toEqual(['a2', 'b1', 'b2']);
  });

  it('explains one call: each rule in order, what it kept and why each provider was dropped', () => {
    const hand = routed([
      { name: 'local', kind: 'zone' },
      { name: 'v1-only', kind: 'condition', rule: 'method = read => version = 1.*' },
    ]);
    const explained = hand.directory.explain(invocation('read', { 'callisto-tag': 'gray' }));
    expect(explained.steps.map((step) => [step.rule, step.kind, step.applied])).toEqual([
      ['v1-only', 'condition', true],
      ['(tags)', 'tag', true],
      ['local', 'zone', false],
    ]);
    expect(explained.steps[0]!.dropped).toEqual([
      { address: '127.0.0.1:1003', why: 'does not match version = 1.*' },
      { address: '127.0.0.1:1005', why: 'does not match version = 1.*' },
    ]);
    expect(explained.steps[1]!.kept).toEqual(['127.0.0.1:1006']);
    expect(explained.steps[2]!.why).toBe('no provider is in zone a');
    expect(explained.result).toEqual(['127.0.0.1:1006']);
    expect(explained.outcome).toBe('the balancer chooses among 127.0.0.1:1006');
  });
});

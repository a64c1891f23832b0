import { describe, expect, it } from 'vitest';
import {
  createOutlierDetector,
  type OutlierDetectorOptions,
  resolveOutlierOptions,
} from '../../src/cluster/circuit-breaker.js';
import { manualClock } from '../support/seeded-random.js';

function setup(options: Partial<OutlierDetectorOptions> = {}) {
  const clock = manualClock(0);
  const detector = createOutlierDetector({ now: clock.now, ...options });
  const fail = (address: string, times = 1, network = true) => {
    for (let i = 0; i < times; i++) detector.record(address, false, network);
  };
  const succeed = (address: string, times = 1) => {
    for (let i = 0; i < times; i++) detector.record(address, true);
  };
  return { clock, detector, fail, succeed };
}

const list = (...addresses: string[]) => addresses.map((address) => ({ address }));

describe('outlier detector', () => {
  it('ejects after 5 consecutive network/timeout failures; a success resets the count', () => {
    const { detector, fail, succeed } = setup();
    fail('a', 4);
    succeed('a');
    fail('a', 4);
    expect(detector.state('a')).toBe('closed');
    fail('a');
    expect(detector.state('a')).toBe('open');
    expect(detector.allow('a')).toBe(false);
    expect(detector.state('unknown')).toBe('closed');
    expect(detector.allow('unknown')).toBe(true);
  });

  it('does not count other failures as consecutive, but does in the error rate', () => {
    const { detector, fail, succeed } = setup();
    fail('a', 9, false);
    expect(detector.state('a')).toBe('closed');
    succeed('a', 10);
    fail('a', 1, false); // 10 of 20 = 50%: not above the threshold
    expect(detector.state('a')).toBe('closed');
    fail('a', 1, false); // 11 of 21
    expect(detector.state('a')).toBe('open');
  });

  it('judges the error rate only from minRequests calls in the window', () => {
    const { clock, detector, fail, succeed } = setup({ consecutiveFailures: 1000 });
    fail('a', 19);
    expect(detector.state('a')).toBe('closed');
    clock.advance(10_000); // the window forgets them
    succeed('a', 5);
    fail('a', 14);
    expect(detector.state('a')).toBe('closed'); // 19 calls
    fail('a');
    expect(detector.state('a')).toBe('open'); // 15 of 20
  });

  it('half-opens after the back-off and lets exactly one probe through; success closes', () => {
    const { clock, detector, fail, succeed } = setup();
    fail('a', 5);
    clock.advance(9_999);
    expect(detector.state('a')).toBe('open');
    clock.advance(1);
    expect(detector.state('a')).toBe('half-open');
    expect(detector.allow('a')).toBe(true);
    expect(detector.allow('a')).toBe(false);
    succeed('a');
    expect(detector.state('a')).toBe('closed');
    expect(detector.allow('a')).toBe(true);
    fail('a', 4); // counts start again from zero
    expect(detector.state('a')).toBe('closed');
  });

  it('re-ejects on a failed probe with a doubled back-off, up to the max', () => {
    const { clock, detector, fail } = setup();
    fail('a', 5);
    const periods: number[] = [];
    for (let i = 0; i < 7; i++) {
      const ejectedAt = clock.now();
      const until = detector.snapshot().find((s) => s.address === 'a')!.ejectedUntil;
      periods.push(until - ejectedAt);
      clock.set(until);
      expect(detector.allow('a')).toBe(true);
      fail('a'); // the probe fails
    }
    expect(periods).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('starts again from the base period after staying closed for maxEjectionMs', () => {
    const { clock, detector, fail, succeed } = setup();
    fail('a', 5);
    clock.advance(10_000);
    detector.allow('a');
    fail('a'); // 20 s
    clock.advance(20_000);
    detector.allow('a');
    succeed('a');
    fail('a', 5); // repeated soon: 40 s
    expect(detector.snapshot()[0]!.ejectedUntil - clock.now()).toBe(40_000);
    clock.advance(40_000);
    detector.allow('a');
    succeed('a');
    clock.advance(300_000);
    fail('a', 5);
    expect(detector.snapshot()[0]!.ejectedUntil - clock.now()).toBe(10_000);
  });

  it('hands out another probe when the first one is lost', () => {
    const { clock, detector, fail } = setup();
    fail('a', 5);
    clock.advance(10_000);
    expect(detector.allow('a')).toBe(true);
    clock.advance(9_999);
    expect(detector.allow('a')).toBe(false);
    clock.advance(1);
    expect(detector.allow('a')).toBe(true);
  });

  it('ignores late outcomes while open', () => {
    const { clock, detector, fail, succeed } = setup();
    fail('a', 5);
    succeed('a', 3);
    expect(detector.state('a')).toBe('open');
    clock.advance(10_000);
    expect(detector.state('a')).toBe('half-open');
  });

  it('filter returns the same array when nothing is ejected', () => {
    const { detector, fail } = setup();
    const endpoints = list('a', 'b', 'c');
    expect(detector.filter(endpoints)).toBe(endpoints);
    fail('a', 4);
    expect(detector.filter(endpoints)).toBe(endpoints);
  });

  it('filter leaves out open providers and half-open ones whose probe is out', () => {
    const { clock, detector, fail } = setup();
    const endpoints = list('a', 'b', 'c', 'd', 'e');
    fail('a', 5);
    expect(detector.filter(endpoints).map((e) => e.address)).toEqual(['b', 'c', 'd', 'e']);
    clock.advance(10_000);
    expect(detector.filter(endpoints)).toHaveLength(5); // probe available: selectable
    expect(detector.allow('a')).toBe(true);
    expect(detector.filter(endpoints).map((e) => e.address)).toEqual(['b', 'c', 'd', 'e']);
  });

  it('never ejects more than maxEjectionRatio of the list (at least one), readmitting the earliest to recover', () => {
    const { clock, detector, fail } = setup();
    const endpoints = list('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j');
    for (const address of ['a', 'b', 'c', 'd', 'e', 'f']) {
      fail(address, 5);
      clock.advance(100);
    }
    // 6 ejected, 40% of 10 = 4 may stay out: the last 4 ejected (c..f) stay out, a and b come back.
    expect(detector.filter(endpoints).map((e) => e.address)).toEqual(['a', 'b', 'g', 'h', 'i', 'j']);
    expect(detector.state('a')).toBe('open');
    // 2 providers: 40% rounds down to 0, but one may always be removed.
    expect(detector.filter(list('a', 'z')).map((e) => e.address)).toEqual(['z']);
  });

  it('returns the list unfiltered rather than nothing', () => {
    const { detector, fail } = setup({ maxEjectionRatio: 1 });
    fail('a', 5);
    fail('b', 5);
    const endpoints = list('a', 'b');
    expect(detector.filter(endpoints)).toBe(endpoints);
  });

  it('forget drops an address', () => {
    const { detector, fail } = setup();
    fail('a', 5);
    detector.forget('a');
    expect(detector.state('a')).toBe('closed');
    const endpoints = list('a', 'b');
    expect(detector.filter(endpoints)).toBe(endpoints);
  });

  it('validates options', () => {
    expect(() => resolveOutlierOptions({ consecutiveFailures: 0 })).toThrow(/consecutiveFailures/);
    expect(() => resolveOutlierOptions({ errorRateThreshold: 2 })).toThrow(/errorRateThreshold/);
    expect(() => resolveOutlierOptions({ baseEjectionMs: 10, maxEjectionMs: 5 })).toThrow(/maxEjectionMs/);
    expect(() => resolveOutlierOptions({ maxEjectionRatio: 1.01 })).toThrow(/maxEjectionRatio/);
  });
});

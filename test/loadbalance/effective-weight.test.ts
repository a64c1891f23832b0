import { describe, expect, it } from 'vitest';
import { EFFECTIVE_WEIGHT_FLOOR, nextWeightFactor } from '../../src/loadbalance/effective-weight.js';
import { createEndpointStats } from '../../src/loadbalance/endpoint-stats.js';
import { createP2cLoadBalancer } from '../../src/loadbalance/p2c.js';
import { createRandomLoadBalancer } from '../../src/loadbalance/random.js';
import { createRoundRobinLoadBalancer } from '../../src/loadbalance/round-robin.js';
import { endpoint, shares, testOptions } from './helpers.js';

const withFactor = (address: string, weightFactor: number, init: { active?: number } = {}) => {
  const e = endpoint(address, 100, init);
  return { ...e, stats: { ...e.stats, weightFactor } };
};

describe('effective weights', () => {
  it('fall by a fifth per failure to the floor, and come back by a fiftieth per success', () => {
    let factor = 1;
    for (let i = 0; i < 10; i++) factor = nextWeightFactor(factor, false);
    expect(factor).toBe(EFFECTIVE_WEIGHT_FLOOR);
    let successes = 0;
    while (factor < 1) {
      factor = nextWeightFactor(factor, true);
      successes++;
    }
    expect(factor).toBe(1);
    expect(successes).toBe(45);
  });

  it('are learnt by the endpoint stats from call outcomes', () => {
    const stats = createEndpointStats();
    expect(stats.weightFactor).toBe(1);
    stats.begin();
    stats.end(1, false);
    expect(stats.weightFactor).toBeCloseTo(0.8);
    stats.reset();
    expect(stats.weightFactor).toBeCloseTo(0.8);
    stats.begin();
    stats.end(1, true);
    expect(stats.weightFactor).toBeCloseTo(0.82);
  });

  it('scale the shares of random and round robin, unless switched off', () => {
    const list = [withFactor('sick', 0.25), withFactor('well', 1)];
    expect(shares(createRandomLoadBalancer(testOptions(5)), list)['sick']).toBeCloseTo(0.2, 1);
    expect(shares(createRoundRobinLoadBalancer(testOptions()), list, 1_000)['sick']).toBe(0.2);
    const off = testOptions(5, { effectiveWeight: false });
    expect(shares(createRandomLoadBalancer(off), list)['sick']).toBeCloseTo(0.5, 1);
  });

  it('p2c: the lower factor of a pair stays in the contest only with probability lower / higher', () => {
    // sick is the less loaded, so it would win every contest it is in.
    const list = [withFactor('sick', 0.1), withFactor('well', 1, { active: 1 })];
    const result = shares(createP2cLoadBalancer(testOptions(7)), list);
    expect(Math.abs(result['sick']! - 0.1)).toBeLessThan(0.02);
    expect(shares(createP2cLoadBalancer(testOptions(7, { effectiveWeight: false })), list)['sick']).toBe(1);
  });
});

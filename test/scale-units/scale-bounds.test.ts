/**
 * The scale suite's pass/fail bounds (test/scale/support/scale-bounds.ts), checked without the suite's
 * minutes of load: a result within every bound passes, one figure over its bound fails naming it, the
 * factor widens every bound, and larger configurations are not judged.
 */
import { describe, expect, it } from 'vitest';
import {
  boundFactor,
  boundViolations,
  isBounded,
  measureContention,
  SCALE_BOUNDS,
} from '../scale/support/scale-bounds.js';
import type { ScaleResult } from '../scale/support/scale-report.js';

const result = (engine: string, updateP99Ms: number): ScaleResult => ({
  engine,
  registrations: 1_000,
  providers: 100,
  services: 20,
  apps: 50,
  appsPerProcess: 1,
  ttlMs: 10_000,
  registerMs: 2_000,
  registerRegistryCpuMs: 100,
  discoveryMs: 11_000,
  discoveryRegistryCpuMs: 500,
  update: {
    events: 20,
    allAppliedMs: { p50: updateP99Ms / 2, p99: updateP99Ms, max: updateP99Ms },
    perAppMs: { p50: 10, p99: updateP99Ms, max: updateP99Ms },
    addMaxMs: updateP99Ms,
    removeMaxMs: updateP99Ms,
  },
  consumer: {
    cpuPerUpdatePerAppMs: 3,
    idleCpuPerAppPerSecondMs: 2,
    heapPerAppBytes: 19 * 1024 * 1024,
    rssPerProcessBytes: 80 * 1024 * 1024,
    warnings: 0,
    warningSamples: [],
  },
  registry: { idleCpuPerSecondMs: 21, eventsCpuMs: 150, rssBytes: 62 * 1024 * 1024, herdCpuMs: 900 },
  herdMs: 7_000,
});

describe('scale bounds', () => {
  it('pass the figures measured on a 2-core machine, with headroom, for every engine', () => {
    expect(Object.keys(SCALE_BOUNDS).sort()).toEqual(['etcd', 'file', 'redis', 'zookeeper']);
    for (const engine of Object.keys(SCALE_BOUNDS))
      expect(boundViolations(result(engine, 105), 1)).toEqual([]);
  });

  it('fail an update propagation p99 over the engine bound, naming it; the factor widens it', () => {
    expect(boundViolations(result('etcd', 2_000), 1)).toEqual([
      'etcd: update p99 (every app applied) 2000 over its bound 1500',
    ]);
    expect(boundViolations(result('etcd', 2_000), 2)).toEqual([]);
    // measured on a machine that left the run half a core: time bounds doubled, CPU bounds not
    expect(boundViolations(result('etcd', 2_000), 1, 2)).toEqual([]);
    const busy = {
      ...result('etcd', 100),
      consumer: { ...result('etcd', 100).consumer, idleCpuPerAppPerSecondMs: 20 },
    };
    expect(boundViolations(busy, 1, 4)).toEqual([
      'etcd: consumer idle CPU per app per s 20 over its bound 15',
    ]);
    // oversubscribed: only memory is judged
    expect(boundViolations({ ...busy, update: result('etcd', 60_000).update }, 1, 40)).toEqual([]);
    const bloated = { ...busy, consumer: { ...busy.consumer, heapPerAppBytes: 100 * 1024 * 1024 } };
    expect(boundViolations(bloated, 1, 40)).toEqual([
      'etcd: consumer heap per app (bytes) 104857600 over its bound 67108864',
    ]);
    expect(boundViolations(result('consul', 100), 1)).toEqual(['no bounds stated for engine consul']);
  });

  it('judge only the stated configuration, and refuse a bad factor', () => {
    expect(isBounded(result('etcd', 100))).toBe(true);
    expect(isBounded({ ...result('etcd', 100), registrations: 5_000 })).toBe(false);
    expect(boundFactor(undefined)).toBe(1);
    expect(boundFactor('2.5')).toBe(2.5);
    expect(() => boundFactor('fast')).toThrow(/SCALE_BOUND_FACTOR=fast/);
    expect(measureContention(20)).toBeGreaterThanOrEqual(1);
  });
});

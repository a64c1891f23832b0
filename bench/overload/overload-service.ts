/**
 * The service of the overload benchmark (bench/overload.ts) and of the overload tests
 * (test/overload/open-loop-overload.test.ts, adaptive-limit.test.ts): `burn(n)` waits one turn of the
 * event loop (as a handler that awaits I/O does, so that calls are in flight together) and then burns
 * `BURN_MS` of CPU, so a provider serves at most 1000 / BURN_MS calls/s; `burnSheddable` is the same,
 * declared `sheddable`; `limiter()` reports the provider's adaptive limit and what it decoded and ran.
 */
import { defineService } from '../../src/index.js';

/** CPU per call, ms. */
export const BURN_MS = 4;

export interface LimiterReport {
  /** Whether `server.adaptiveLimit` is on. */
  on: boolean;
  limit: number;
  admitted: number;
  refused: number;
  overloaded: boolean;
  /** `burn` and `burnSheddable` calls that reached the provider's chain (before any admission). */
  arrived: number;
  /** `burn` and `burnSheddable` calls whose arguments were decoded, and that ran. */
  decoded: number;
  executed: number;
  /** The admin port (/metrics, /stats). */
  adminPort: number;
}

export interface OverloadBench {
  burn(n: number): Promise<number>;
  burnSheddable(n: number): Promise<number>;
  limiter(): Promise<LimiterReport>;
}

export const OverloadBenchDef = defineService<OverloadBench>('bench.Overload', {
  methods: { burn: {}, burnSheddable: { priority: 'sheddable' }, limiter: { priority: 'critical' } },
});

export function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // burning CPU on purpose
  }
}

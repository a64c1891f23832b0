/**
 * The service of the overload benchmark (bench/overload.ts) and of test/overload/open-loop-overload.test.ts:
 * `burn(n)` waits one turn of the event loop (as a handler that awaits I/O does, so that calls are in
 * flight together) and then burns `BURN_MS` of CPU, so a provider serves at most 1000 / BURN_MS calls/s;
 * `limiter()` reports the provider's adaptive limit.
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
}

export interface OverloadBench {
  burn(n: number): Promise<number>;
  limiter(): Promise<LimiterReport>;
}

export const OverloadBenchDef = defineService<OverloadBench>('bench.Overload', {
  methods: { burn: {}, limiter: { priority: 'critical' } },
});

export function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // burning CPU on purpose
  }
}

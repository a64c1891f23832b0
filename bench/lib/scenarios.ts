/**
 * The benchmark's scenarios and the service every system serves. Shared by the harness (which runs
 * the scenarios) and by the systems' clients (which map a scenario to a method).
 */

/** The result of `getUser`. */
export interface BenchUser {
  id: number;
  name: string;
  email: string;
  age: number;
  active: boolean;
}

/** The service every system serves, with the same behaviour (see {@link benchService}). */
export interface BenchService {
  say(msg: string): Promise<string>;
  getUser(id: number): Promise<BenchUser>;
}

/** Service name and version a framework system registers the service under. */
export const BENCH_SERVICE_NAME = 'bench.UserService';
export const BENCH_SERVICE_VERSION = '1.0.0';

/** The reference implementation; every system's server should use it as it is. */
export const benchService: BenchService = {
  async say(msg) {
    return `hello ${msg}`;
  },
  async getUser(id) {
    return { id, name: `user-${id}`, email: `user-${id}@example.com`, age: 20 + (id % 50), active: true };
  },
};

export type ScenarioName = 'S1' | 'S2' | 'S3';
export type BenchMethod = keyof BenchService;

export interface Scenario {
  readonly name: ScenarioName;
  /** One line for the report. */
  readonly description: string;
  readonly method: BenchMethod;
  /** Measured calls at BENCH_SCALE=1. */
  readonly calls: number;
  /** Calls kept in flight. */
  readonly concurrency: number;
  /** The target for Callisto against the baseline, as printed in the report. */
  readonly target: ScenarioTarget;
}

export type ScenarioTarget =
  | { readonly kind: 'throughput'; readonly minRatio: number }
  | { readonly kind: 'p50'; readonly maxRatio: number };

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'S1',
    description: 'latency: 1 call in flight, say("test")',
    method: 'say',
    calls: 20_000,
    concurrency: 1,
    target: { kind: 'p50', maxRatio: 1.1 },
  },
  {
    name: 'S2',
    description: 'throughput: 256 calls in flight, getUser(i) returning a small object',
    method: 'getUser',
    calls: 200_000,
    concurrency: 256,
    target: { kind: 'throughput', minRatio: 0.9 },
  },
  {
    name: 'S3',
    description: 'throughput: 1,000 calls in flight, say("test")',
    method: 'say',
    calls: 200_000,
    concurrency: 1_000,
    target: { kind: 'throughput', minRatio: 0.85 },
  },
];

/** Share of the measured calls run first as warm-up (JIT, connection, buffers). */
export const WARMUP_SHARE = 0.05;

/**
 * Fewest warm-up calls, whatever the share: with one call in flight, 5% of S1 (1,000 calls) ends before
 * V8 has optimized the call path of any system but the smallest, so S1 would measure the JIT instead of
 * the steady state. Every system gets the same warm-up.
 */
export const MIN_WARMUP_CALLS = 5_000;

/** Warm-up calls before measuring `calls` calls (scaled by BENCH_SCALE like them). */
export function warmupCallsFor(calls: number, scale = 1): number {
  return Math.max(Math.ceil(calls * WARMUP_SHARE), Math.ceil(MIN_WARMUP_CALLS * Math.min(1, scale)));
}

export function findScenario(name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name);
  if (found === undefined) {
    throw new Error(`unknown scenario "${name}" (expected ${SCENARIOS.map((s) => s.name).join(', ')})`);
  }
  return found;
}

/** Throws when `result` is not what {@link benchService} returns for call `i` of `method`. */
export function checkResult(method: BenchMethod, i: number, result: unknown): void {
  if (method === 'say') {
    if (result !== 'hello test') throw new Error(`say("test") returned ${JSON.stringify(result)}`);
    return;
  }
  const user = result as Partial<BenchUser> | null;
  if (typeof user !== 'object' || user === null || user.id !== i || user.name !== `user-${i}`) {
    throw new Error(`getUser(${i}) returned ${JSON.stringify(result)}`);
  }
}

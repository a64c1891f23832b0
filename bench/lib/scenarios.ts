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

/** One message of the `ticks` server stream (scenarios S6 to S8). */
export interface BenchTick {
  seq: number;
  price: number;
}

/**
 * The server stream every streaming system serves: `ticks(count)` yields `count` ticks
 * `{ seq, price }` (`count` 0: without end, until the caller cancels). Systems without streams leave it out.
 */
export interface BenchStreamService {
  ticks(count: number): AsyncIterable<BenchTick>;
}

/** The reference implementation of {@link BenchStreamService}, as an async generator. */
export const benchStreamService: BenchStreamService = {
  async *ticks(count) {
    const end = count === 0 ? Number.POSITIVE_INFINITY : count;
    for (let seq = 0; seq < end; seq++) yield { seq, price: 100 + (seq % 1000) / 100 };
  },
};

/**
 * The large-payload method (scenarios S4-64K, S4-1M): `echoBytes(data)` answers the bytes it was sent.
 * Systems without it leave it out (their S4 rows show `-`).
 */
export interface BenchBytesService {
  echoBytes(data: Uint8Array): Promise<Uint8Array>;
}

/** The reference implementation of {@link BenchBytesService}: the argument, as it is. */
export const benchBytesService: BenchBytesService = {
  async echoBytes(data) {
    return data;
  },
};

export type ScenarioName = 'S1' | 'S2' | 'S3' | 'S4-64K' | 'S4-1M' | 'S5' | 'S6' | 'S7' | 'S8';
export type BenchMethod = keyof BenchService | keyof BenchStreamService | keyof BenchBytesService;

/**
 * How the client drives a scenario: `unary` calls (S1 to S3), `bytes` (S4: unary `echoBytes` calls
 * of `payloadBytes` each), `many-clients` (S5: `clients` client processes of `connections`
 * connections each, started together and measured for `durationMs`), `stream` (S6, S7: `concurrency` streams
 * of `calls / concurrency` ticks each, `calls` counting messages), `unary-beside-stream` (S8: the
 * unary load measured alone, then again while one endless stream runs on the same connection).
 */
export type ScenarioKind = 'unary' | 'bytes' | 'many-clients' | 'stream' | 'unary-beside-stream';

export interface Scenario {
  readonly name: ScenarioName;
  readonly kind: ScenarioKind;
  /** One line for the report. */
  readonly description: string;
  readonly method: BenchMethod;
  /** Measured calls (stream scenarios: messages) at BENCH_SCALE=1. */
  readonly calls: number;
  /** Calls kept in flight (S6, S7: streams open at once). */
  readonly concurrency: number;
  /** The target for Callisto against the baseline, as printed in the report. */
  readonly target: ScenarioTarget;
  /** S4: the size of the bytes sent and answered by every call. */
  readonly payloadBytes?: number;
  /** S5: client processes run at once against the one server. */
  readonly clients?: number;
  /** S5: connections each client process opens (calls spread over them in turn). */
  readonly connections?: number;
  /** S5: how long every client measures, all starting together (at BENCH_SCALE=1), ms. */
  readonly durationMs?: number;
}

export type ScenarioTarget =
  | { readonly kind: 'throughput'; readonly minRatio: number }
  | { readonly kind: 'p50'; readonly maxRatio: number }
  /** Reported, no target. */
  | { readonly kind: 'none' }
  /**
   * S5: the spread of the clients' calls/s (slowest over fastest) at least this, or at least the
   * baseline's when the baseline's is lower (no loss of fairness against it).
   */
  | { readonly kind: 'fairness'; readonly minSpread: number }
  /** S8: unary p99 beside a stream over p99 alone, reported and never judged. */
  | { readonly kind: 'p99-beside-stream'; readonly expectedRatio: number };

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'S1',
    kind: 'unary',
    description: 'latency: 1 call in flight, say("test")',
    method: 'say',
    calls: 20_000,
    concurrency: 1,
    target: { kind: 'p50', maxRatio: 1.1 },
  },
  {
    name: 'S2',
    kind: 'unary',
    description: 'throughput: 256 calls in flight, getUser(i) returning a small object',
    method: 'getUser',
    calls: 200_000,
    concurrency: 256,
    target: { kind: 'throughput', minRatio: 0.9 },
  },
  {
    name: 'S3',
    kind: 'unary',
    description: 'throughput: 1,000 calls in flight, say("test")',
    method: 'say',
    calls: 200_000,
    concurrency: 1_000,
    target: { kind: 'throughput', minRatio: 0.85 },
  },
  {
    name: 'S4-64K',
    kind: 'bytes',
    description: 'large payloads: 16 calls in flight, echoBytes(64 KiB) answering its 64 KiB',
    method: 'echoBytes',
    calls: 20_000,
    concurrency: 16,
    payloadBytes: 64 * 1024,
    target: { kind: 'throughput', minRatio: 0.9 },
  },
  {
    name: 'S4-1M',
    kind: 'bytes',
    description: 'large payloads: 4 calls in flight, echoBytes(1 MiB) answering its 1 MiB',
    method: 'echoBytes',
    calls: 2_000,
    concurrency: 4,
    payloadBytes: 1024 * 1024,
    target: { kind: 'throughput', minRatio: 0.9 },
  },
  {
    name: 'S5',
    kind: 'many-clients',
    description:
      'many consumers: 4 client processes x 16 connections, 8 getUser(i) in flight per connection, measured together',
    method: 'getUser',
    calls: 2_000,
    concurrency: 128,
    clients: 4,
    connections: 16,
    durationMs: 5_000,
    target: { kind: 'fairness', minSpread: 0.8 },
  },
  {
    name: 'S6',
    kind: 'stream',
    description: 'one server stream: ticks(N) yielding small { seq, price } messages',
    method: 'ticks',
    calls: 200_000,
    concurrency: 1,
    target: { kind: 'throughput', minRatio: 0.8 },
  },
  {
    name: 'S7',
    kind: 'stream',
    description: '100 concurrent server streams of N/100 ticks each, on one connection',
    method: 'ticks',
    calls: 200_000,
    concurrency: 100,
    target: { kind: 'none' },
  },
  {
    name: 'S8',
    kind: 'unary-beside-stream',
    description:
      'unary getUser(i), 64 in flight, alone and beside one endless ticks stream on the same connection',
    method: 'getUser',
    calls: 50_000,
    concurrency: 64,
    target: { kind: 'p99-beside-stream', expectedRatio: 1 },
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

/**
 * Fewest warm-up messages of a stream scenario: 5% of S6 (10,000 messages) is over in about 8 ms, before
 * V8 has optimized the decoding and iteration paths, so a run of 200,000 messages (about 150 ms) measured
 * the JIT as much as the stream (callisto 79% of the baseline at 200,000 messages, 94% at 1,000,000).
 * 100,000 messages take about as long as the unary minimum. Every system gets the same warm-up.
 */
export const MIN_WARMUP_MESSAGES = 100_000;

/** Warm-up messages before measuring `messages` stream messages. */
export function warmupMessagesFor(messages: number): number {
  return Math.max(Math.ceil(messages * WARMUP_SHARE), MIN_WARMUP_MESSAGES);
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
  if (method === 'echoBytes') {
    checkBytes(i, result, undefined);
    return;
  }
  if (method === 'ticks') {
    const tick = result as Partial<BenchTick> | null;
    if (typeof tick !== 'object' || tick === null || tick.seq !== i || typeof tick.price !== 'number') {
      throw new Error(`ticks message ${i} was ${JSON.stringify(result)}`);
    }
    return;
  }
  const user = result as Partial<BenchUser> | null;
  if (typeof user !== 'object' || user === null || user.id !== i || user.name !== `user-${i}`) {
    throw new Error(`getUser(${i}) returned ${JSON.stringify(result)}`);
  }
}

/** The bytes every S4 call sends: `size` bytes of a fixed pattern (the same on every system). */
export function benchPayload(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  return bytes;
}

/**
 * Throws when `result` is not an echo of `sent` (its length and three sampled bytes; every byte when
 * `sent` is undefined and `result` is not bytes at all).
 */
export function checkBytes(i: number, result: unknown, sent: Uint8Array | undefined): void {
  if (!(result instanceof Uint8Array)) {
    throw new Error(`echoBytes call ${i} returned ${Object.prototype.toString.call(result)}, not bytes`);
  }
  if (sent === undefined) return;
  const last = sent.length - 1;
  const middle = sent.length >> 1;
  if (
    result.length !== sent.length ||
    result[0] !== sent[0] ||
    result[middle] !== sent[middle] ||
    result[last] !== sent[last]
  ) {
    throw new Error(
      `echoBytes call ${i} returned ${result.length} bytes that are not the ${sent.length} sent`,
    );
  }
}

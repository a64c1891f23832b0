/**
 * The stream scenarios' driver, shared by every streaming system's client: S6/S7 read `streams`
 * server streams of `messages / streams` ticks at once and report messages/s (p50/p99: how long a
 * stream took from open to end); S8 measures a unary load alone, then again beside one endless stream
 * on the same connection. A system's client only says how to open a stream.
 */
import { performance } from 'node:perf_hooks';
import { measurePhase, percentile, runScenario, type ScenarioResult } from './driver.js';
import { type BenchTick, checkResult } from './scenarios.js';

/** Opens `ticks(count)` (`count` 0: until the caller stops reading). */
export type OpenStream = (count: number) => AsyncIterable<BenchTick>;

export interface StreamRunOptions {
  open: OpenStream;
  /** Measured messages, over all streams. */
  messages: number;
  /** Streams open at once, each reading `messages / streams` (the first ones one more when uneven). */
  streams: number;
  /** Messages of the warm-up phase (the same number of streams). */
  warmupMessages: number;
  onMeasureStart?: () => void;
}

/** Reads a stream to its end, checking every message's seq; resolves with its duration in ms. */
async function readStream(open: OpenStream, count: number): Promise<number> {
  const started = performance.now();
  let seq = 0;
  for await (const tick of open(count)) {
    if (tick.seq !== seq) checkResult('ticks', seq, tick);
    seq++;
  }
  if (seq !== count) throw new Error(`stream ended after ${seq} of ${count} messages`);
  return performance.now() - started;
}

async function readStreams(
  open: OpenStream,
  messages: number,
  streams: number,
): Promise<{ durations: number[]; errors: number; firstError?: string }> {
  const base = Math.floor(messages / streams);
  const extra = messages % streams;
  const outcomes = await Promise.allSettled(
    Array.from({ length: streams }, (_, s) => readStream(open, base + (s < extra ? 1 : 0))),
  );
  const durations: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') durations.push(outcome.value);
    else {
      errors++;
      firstError ??= outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
    }
  }
  return firstError === undefined ? { durations, errors } : { durations, errors, firstError };
}

/** S6, S7: warm-up, then the measured streams. `calls` in the result counts messages. */
export async function runStreamScenario(options: StreamRunOptions): Promise<ScenarioResult> {
  const { open, messages, streams } = options;
  const streamCount = Math.max(1, Math.min(streams, messages));
  if (options.warmupMessages > 0) await readStreams(open, options.warmupMessages, streamCount);
  options.onMeasureStart?.();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const phase = await readStreams(open, messages, streamCount);
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = Float64Array.from(phase.durations).sort();
  const result: ScenarioResult = {
    calls: messages,
    seconds,
    callsPerSec: messages / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    errors: phase.errors,
    clientCpuUsPerCall: (cpu.user + cpu.system) / messages,
  };
  if (phase.firstError !== undefined) result.firstError = phase.firstError;
  return result;
}

export interface BesideStreamOptions {
  call: (i: number) => Promise<unknown>;
  calls: number;
  concurrency: number;
  warmupCalls: number;
  open: OpenStream;
  onMeasureStart?: () => void;
}

/**
 * S8: warm-up, the unary load alone, then one endless stream opened and read flat out (its first
 * message awaited), the same unary load measured beside it, and the stream cancelled (`break`).
 * The result's own figures are those beside the stream; `alone` holds the others. The server's CPU is
 * sampled over the beside phase (unary and stream work together).
 */
export async function runBesideStreamScenario(options: BesideStreamOptions): Promise<ScenarioResult> {
  const { call, calls, concurrency, open } = options;
  const alone = await runScenario({ call, calls, concurrency, warmupCalls: options.warmupCalls });
  let stop = false;
  let received = 0;
  let firstMessage!: () => void;
  const flowing = new Promise<void>((resolve) => {
    firstMessage = resolve;
  });
  const reading = (async () => {
    for await (const tick of open(0)) {
      if (tick.seq !== received) checkResult('ticks', received, tick);
      if (received++ === 0) firstMessage();
      if (stop) break;
    }
    throw new Error(`the endless stream ended after ${received} messages`);
  })();
  const failed = reading.then(
    () => undefined,
    (error: unknown) => {
      if (!stop) throw error;
    },
  );
  await Promise.race([flowing, failed]);
  const receivedBefore = received;
  const beside = await Promise.race([
    measurePhase({ call, calls, concurrency, onMeasureStart: options.onMeasureStart }),
    // `failed` rejects when the stream fails, and resolves only once `stop` is set
    failed.then(() => new Promise<never>(() => {})),
  ]);
  const streamed = received - receivedBefore;
  stop = true;
  await failed;
  return {
    ...beside,
    alone: { callsPerSec: alone.callsPerSec, p50Ms: alone.p50Ms, p99Ms: alone.p99Ms },
    streamMessagesPerSec: streamed / beside.seconds,
  };
}

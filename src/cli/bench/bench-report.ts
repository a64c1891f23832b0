/**
 * A benchmark's result as `bench --json` prints it and `--out` saves it: the document two runs are
 * compared from (`--compare previous.json`, `callisto bench compare a.json b.json`). Files are read back
 * through a schema, so a file that is not a report is a usage error naming the field at fault.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { usageError } from '../../tools/exit-codes.js';
import type { BenchOutcome } from './run-bench.js';

/** Format version of the document (`callistoBench`). */
export const BENCH_REPORT_FORMAT = 1;

const latencySchema = z.object({
  min: z.number(),
  mean: z.number(),
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
  p999: z.number(),
  max: z.number(),
});

export const benchReportSchema = z.object({
  callistoBench: z.literal(BENCH_REPORT_FORMAT),
  target: z.object({
    service: z.string(),
    method: z.string(),
    version: z.string(),
    group: z.string(),
    via: z.string(),
    serializer: z.string(),
  }),
  startedAt: z.string(),
  concurrency: z.number().int().positive(),
  limit: z.object({ calls: z.number().optional(), durationMs: z.number().optional() }),
  warmupCalls: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  ok: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  /** Successful calls per second. */
  callsPerSecond: z.number().nonnegative(),
  /** Of successful calls; null when none succeeded. */
  latencyMs: latencySchema.nullable(),
  histogram: z.array(z.object({ upToMs: z.number().nullable(), count: z.number().int().nonnegative() })),
  errors: z.record(z.string(), z.number().int().nonnegative()),
  interrupted: z.boolean(),
});

export type BenchReport = z.infer<typeof benchReportSchema>;

export function buildReport(
  target: BenchReport['target'],
  plan: {
    concurrency: number;
    calls?: number | undefined;
    durationMs?: number | undefined;
    warmupCalls: number;
  },
  outcome: BenchOutcome,
): BenchReport {
  const limit: BenchReport['limit'] = {};
  if (plan.calls !== undefined) limit.calls = plan.calls;
  if (plan.durationMs !== undefined) limit.durationMs = plan.durationMs;
  return {
    callistoBench: BENCH_REPORT_FORMAT,
    target,
    startedAt: outcome.startedAt.toISOString(),
    concurrency: plan.concurrency,
    limit,
    warmupCalls: plan.warmupCalls,
    durationMs: outcome.durationMs,
    ok: outcome.ok,
    failed: outcome.failed,
    callsPerSecond: outcome.durationMs > 0 ? (outcome.ok * 1_000) / outcome.durationMs : 0,
    latencyMs: outcome.latency.summary() ?? null,
    histogram: outcome.latency.buckets(),
    errors: outcome.errors,
    interrupted: outcome.interrupted,
  };
}

/** Reads a saved report; a missing file or one that is not a report is a usage error naming it. */
export function readBenchReport(file: string): BenchReport {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usageError(`cannot read the benchmark file ${file}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `${file} is not JSON (${(error as Error).message}); save a run with bench --out ${file}`,
    );
  }
  const parsed = benchReportSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join('.') : 'the document';
    throw usageError(
      `${file} is not a callisto bench result (${where}: ${issue.message}); save a run with bench --out ${file}`,
    );
  }
  return parsed.data;
}

/**
 * Printing and saving the results: one table per scenario, each system against the baseline, and
 * Callisto's targets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ScenarioResult } from './driver.js';
import type { Scenario } from './scenarios.js';

/** One system's outcome in one scenario. */
export type SystemOutcome =
  | ({
      ok: true;
      serverPeakRssBytes: number | null;
      /** Server CPU time per measured call, in microseconds (sampled from /proc; null off Linux). */
      serverCpuUsPerCall: number | null;
      /** S5: every client process's own figures over the same window. */
      perClient?: ClientFigures[];
      /** S5: the slowest client's calls/s over the fastest's (1: perfectly even). */
      spread?: number;
      /** With BENCH_RUNS > 1: every run's figures (the outcome itself is the median run). */
      runs?: Array<{ callsPerSec: number; p50Ms: number; p99Ms: number } | { error: string }>;
    } & ScenarioResult)
  | {
      ok: false;
      error: string;
      /** The system cannot run this scenario (a stream scenario, no streams): shown as "-", not a failure. */
      unsupported?: true;
    };

/** One client process's figures in S5. */
export interface ClientFigures {
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  clientCpuUsPerCall: number;
  errors: number;
}

export interface Comparison {
  /** Throughput of the system over the baseline's. */
  throughputRatio: number;
  /** p50 latency of the system over the baseline's. */
  p50Ratio: number;
  /** Whether the scenario's target is met (only judged for Callisto). */
  targetMet?: boolean;
}

export interface ScenarioReport {
  scenario: string;
  description: string;
  method: string;
  calls: number;
  concurrency: number;
  warmupCalls: number;
  target: string;
  results: Record<string, SystemOutcome>;
  /** Each non-baseline system against the baseline, when both succeeded. */
  versusBaseline: Record<string, Comparison>;
}

export const BASELINE = 'baseline';
export const CALLISTO = 'callisto';

export function describeTarget(scenario: Scenario): string {
  const unit = scenario.kind === 'stream' ? 'messages/s' : 'throughput';
  switch (scenario.target.kind) {
    case 'throughput':
      return `callisto ${unit} >= ${scenario.target.minRatio * 100}% of baseline`;
    case 'p50':
      return `callisto p50 <= ${scenario.target.maxRatio}x baseline`;
    case 'p99-beside-stream':
      return 'unary p99 beside the stream unchanged within noise (ratio reported, not judged)';
    case 'none':
      return 'none (reported)';
    case 'fairness':
      return `per-client calls/s spread (slowest/fastest) >= ${scenario.target.minSpread} or >= the baseline's`;
  }
}

export function compare(
  scenario: Scenario,
  results: Record<string, SystemOutcome>,
): Record<string, Comparison> {
  const base = results[BASELINE];
  const out: Record<string, Comparison> = {};
  if (base === undefined || !base.ok) return out;
  for (const [system, outcome] of Object.entries(results)) {
    if (system === BASELINE || !outcome.ok) continue;
    const comparison: Comparison = {
      throughputRatio: outcome.callsPerSec / base.callsPerSec,
      p50Ratio: outcome.p50Ms / base.p50Ms,
    };
    if (system === CALLISTO && scenario.target.kind === 'throughput') {
      comparison.targetMet = comparison.throughputRatio >= scenario.target.minRatio;
    } else if (system === CALLISTO && scenario.target.kind === 'p50') {
      comparison.targetMet = comparison.p50Ratio <= scenario.target.maxRatio;
    } else if (system === CALLISTO && scenario.target.kind === 'fairness') {
      const spread = outcome.spread ?? 0;
      comparison.targetMet =
        spread >= scenario.target.minSpread || spread >= (base.spread ?? Number.POSITIVE_INFINITY);
    }
    out[system] = comparison;
  }
  return out;
}

export const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** The table of one scenario, as text. */
export function formatScenario(report: ScenarioReport, scenario: Scenario): string {
  const lines = [
    `${report.scenario}  ${report.description}`,
    `    ${int.format(report.calls)} calls, ${int.format(report.concurrency)} in flight, ` +
      `${int.format(report.warmupCalls)} warm-up calls; target: ${report.target}`,
  ];
  const header = [
    'system',
    'calls/s',
    'p50 ms',
    'p99 ms',
    'server RSS MB',
    'CPU µs/call srv+cli',
    'errors',
    'vs baseline',
  ];
  const rows: string[][] = [];
  for (const [system, outcome] of Object.entries(report.results)) {
    if (!outcome.ok && outcome.unsupported === true) {
      rows.push([system, '-', '', '', '', '', '', outcome.error]);
      continue;
    }
    if (!outcome.ok) {
      rows.push([system, 'FAILED', '', '', '', '', '', firstLine(outcome.error)]);
      continue;
    }
    const rss = outcome.serverPeakRssBytes === null ? '-' : fixed(outcome.serverPeakRssBytes / 2 ** 20, 1);
    rows.push([
      system,
      int.format(outcome.callsPerSec),
      fixed(outcome.p50Ms, 3),
      fixed(outcome.p99Ms, 3),
      rss,
      `${outcome.serverCpuUsPerCall === null ? '-' : fixed(outcome.serverCpuUsPerCall, 1)} + ${fixed(outcome.clientCpuUsPerCall, 1)}`,
      String(outcome.errors),
      versus(system, report.versusBaseline[system], scenario),
    ]);
  }
  lines.push(...renderTable(header, rows));
  return lines.join('\n');
}

/**
 * A table's lines, indented: the header, a rule and the rows; the first and last columns left-aligned,
 * the others right-aligned.
 */
export function renderTable(header: readonly string[], rows: readonly string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    `    ${cells
      .map((cell, i) =>
        i === 0 || i === cells.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!),
      )
      .join('  ')
      .trimEnd()}`;
  return [render(header), render(widths.map((w) => '-'.repeat(w))), ...rows.map(render)];
}

function versus(system: string, comparison: Comparison | undefined, scenario: Scenario): string {
  if (system === BASELINE) return '(reference)';
  if (comparison === undefined) return '-';
  const text =
    scenario.target.kind === 'p50'
      ? `p50 ${fixed(comparison.p50Ratio, 2)}x, throughput ${fixed(comparison.throughputRatio * 100, 0)}%`
      : `throughput ${fixed(comparison.throughputRatio * 100, 0)}%`;
  if (comparison.targetMet === undefined) return text;
  return `${text}  ${comparison.targetMet ? 'PASS' : 'MISS'}`;
}

export function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

/** Writes `data` as pretty JSON, creating the folder. */
export function writeJson(path: string, data: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}

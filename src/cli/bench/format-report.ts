/** Benchmark results as people read them: one run, or two side by side with the change. */
import type { Output } from '../output.js';
import { formatTable } from '../table.js';
import { formatMs } from '../time-text.js';
import type { BenchReport } from './bench-report.js';

const BAR_WIDTH = 30;

const number = (value: number) => Math.round(value).toLocaleString('en-US');

function describeLimit(report: BenchReport): string {
  const parts: string[] = [];
  if (report.limit.calls !== undefined) parts.push(`${number(report.limit.calls)} calls`);
  if (report.limit.durationMs !== undefined) parts.push(`${report.limit.durationMs / 1_000} s`);
  return parts.join(' or ');
}

export function printReport(output: Output, report: BenchReport): void {
  const { target } = report;
  output.line(
    output.style(
      'bold',
      `bench ${target.service}.${target.method} (${target.version}${target.group ? `, group ${target.group}` : ''}) via ${target.via}, ${target.serializer}`,
    ),
  );
  output.line(
    `  concurrency ${report.concurrency}, limit ${describeLimit(report)}${report.warmupCalls ? `, after ${number(report.warmupCalls)} warm-up calls` : ''}${report.interrupted ? output.style('yellow', ', interrupted') : ''}`,
  );
  const failed = report.failed > 0 ? output.style('red', `${number(report.failed)} failed`) : '0 failed';
  output.line(
    `  ${number(report.ok)} calls ok, ${failed} in ${(report.durationMs / 1_000).toFixed(2)} s: ${output.style('bold', number(report.callsPerSecond))} calls/s`,
  );
  const l = report.latencyMs;
  if (l) {
    output.line(
      `  latency ms: min ${formatMs(l.min)}  mean ${formatMs(l.mean)}  p50 ${formatMs(l.p50)}  p90 ${formatMs(l.p90)}  p99 ${formatMs(l.p99)}  p99.9 ${formatMs(l.p999)}  max ${formatMs(l.max)}`,
    );
    const most = Math.max(...report.histogram.map((b) => b.count));
    const rows = report.histogram.map((bucket, i) => {
      const previous = report.histogram[i - 1]?.upToMs;
      const label = bucket.upToMs === null ? `> ${previous ?? 0} ms` : `<= ${bucket.upToMs} ms`;
      const bar = '█'.repeat(Math.round((bucket.count / most) * BAR_WIDTH));
      const share = ((bucket.count / report.ok) * 100).toFixed(1);
      return [label, bar.padEnd(BAR_WIDTH, ' '), number(bucket.count), `${share}%`];
    });
    output.line('  histogram:');
    for (const line of formatTable(['', '', '', ''], rows, '   ').slice(1)) output.line(line);
  }
  const codes = Object.entries(report.errors).sort(([, a], [, b]) => b - a);
  if (codes.length > 0) {
    output.line('  errors by code:');
    for (const line of formatTable(
      ['', ''],
      codes.map(([code, n]) => [code, number(n)]),
      '   ',
    ).slice(1)) {
      output.line(output.style('red', line));
    }
  }
}

interface Metric {
  readonly label: string;
  readonly of: (report: BenchReport) => number | undefined;
  /** Whether a larger value is better (calls/s) or worse (latency, failures). */
  readonly higherIsBetter: boolean;
  readonly format: (value: number) => string;
}

const latency = (label: string, key: keyof NonNullable<BenchReport['latencyMs']>): Metric => ({
  label: `${label} ms`,
  of: (r) => r.latencyMs?.[key],
  higherIsBetter: false,
  format: formatMs,
});

export const METRICS: readonly Metric[] = [
  { label: 'calls/s', of: (r) => r.callsPerSecond, higherIsBetter: true, format: number },
  latency('mean', 'mean'),
  latency('p50', 'p50'),
  latency('p90', 'p90'),
  latency('p99', 'p99'),
  latency('p99.9', 'p999'),
  latency('max', 'max'),
  { label: 'failed calls', of: (r) => r.failed, higherIsBetter: false, format: number },
];

/** The relative change from `before` to `after` (0.1 = +10%), undefined when it cannot be said. */
function change(before: number | undefined, after: number | undefined): number | undefined {
  if (before === undefined || after === undefined || before === 0) return undefined;
  return after / before - 1;
}

/** The comparison as data (`--json`): per metric, both values and the relative change. */
export function comparisonData(before: BenchReport, after: BenchReport): Record<string, unknown> {
  return Object.fromEntries(
    METRICS.map((metric) => {
      const [a, b] = [metric.of(before), metric.of(after)];
      return [metric.label, { before: a ?? null, after: b ?? null, change: change(a, b) ?? null }];
    }),
  );
}

export function printComparison(
  output: Output,
  before: BenchReport,
  after: BenchReport,
  labels: [string, string],
): void {
  const header = ['', labels[0], labels[1], 'change'].map((h) => output.style('bold', h));
  const rows = METRICS.map((metric) => {
    const [a, b] = [metric.of(before), metric.of(after)];
    const delta = change(a, b);
    let text = '-';
    if (delta !== undefined) {
      text = `${delta >= 0 ? '+' : ''}${(delta * 100).toFixed(1)}%`;
      const better = metric.higherIsBetter ? delta > 0.02 : delta < -0.02;
      const worse = metric.higherIsBetter ? delta < -0.02 : delta > 0.02;
      if (better) text = output.style('green', text);
      if (worse) text = output.style('red', text);
    }
    return [
      metric.label,
      a === undefined ? '-' : metric.format(a),
      b === undefined ? '-' : metric.format(b),
      text,
    ];
  });
  for (const line of formatTable(header, rows)) output.line(line);
  const differs = (key: 'concurrency' | 'serializer' | 'via') => {
    const of = (r: BenchReport) => (key === 'concurrency' ? String(r.concurrency) : r.target[key]);
    return of(before) !== of(after) ? `${key} ${of(before)} vs ${of(after)}` : undefined;
  };
  const notes = [differs('concurrency'), differs('serializer'), differs('via')].filter(Boolean);
  if (
    `${before.target.service}.${before.target.method}` !== `${after.target.service}.${after.target.method}`
  ) {
    notes.unshift(
      `different methods: ${before.target.service}.${before.target.method} vs ${after.target.service}.${after.target.method}`,
    );
  }
  if (notes.length > 0) output.line(output.style('yellow', `note: the runs differ: ${notes.join('; ')}`));
}

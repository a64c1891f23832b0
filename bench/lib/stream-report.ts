/**
 * The tables of the stream scenarios: S6/S7 in messages/s and CPU µs per message, S8 as the unary
 * load's figures alone and beside a stream, with the p99 ratio.
 */
import {
  BASELINE,
  type Comparison,
  firstLine,
  fixed,
  int,
  type ScenarioReport,
  type SystemOutcome,
} from './report.js';
import type { Scenario } from './scenarios.js';

type Ok = Extract<SystemOutcome, { ok: true }>;

/** The table of one stream scenario (kind `stream` or `unary-beside-stream`), as text. */
export function formatStreamScenario(report: ScenarioReport, scenario: Scenario): string {
  const besides = scenario.kind === 'unary-beside-stream';
  const amounts = besides
    ? `${int.format(report.calls)} calls, ${int.format(report.concurrency)} in flight, ${int.format(report.warmupCalls)} warm-up calls, alone then beside one stream`
    : `${int.format(report.calls)} messages over ${int.format(report.concurrency)} stream(s)`;
  const lines = [`${report.scenario}  ${report.description}`, `    ${amounts}; target: ${report.target}`];
  const header = besides
    ? [
        'system',
        'alone calls/s',
        'p50 ms',
        'p99 ms',
        'beside calls/s',
        'p50 ms',
        'p99 ms',
        'p99 beside/alone',
        'stream msg/s',
        'errors',
      ]
    : [
        'system',
        'messages/s',
        'stream ms p50',
        'p99',
        'server RSS MB',
        'CPU µs/msg srv+cli',
        'errors',
        'vs baseline',
      ];
  const rows: string[][] = [];
  for (const [system, outcome] of Object.entries(report.results)) {
    const blank = header.slice(2).map(() => '');
    if (!outcome.ok) {
      rows.push([
        system,
        outcome.unsupported === true ? '-' : 'FAILED',
        ...blank.slice(0, -1),
        firstLine(outcome.error),
      ]);
      continue;
    }
    rows.push(
      besides ? besideRow(system, outcome) : streamRow(system, outcome, report.versusBaseline[system]),
    );
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]): string =>
    `    ${cells
      .map((cell, i) =>
        i === 0 || i === cells.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!),
      )
      .join('  ')
      .trimEnd()}`;
  lines.push(render(header), render(widths.map((w) => '-'.repeat(w))), ...rows.map(render));
  return lines.join('\n');
}

function streamRow(system: string, outcome: Ok, comparison: Comparison | undefined): string[] {
  const rss = outcome.serverPeakRssBytes === null ? '-' : fixed(outcome.serverPeakRssBytes / 2 ** 20, 1);
  const server = outcome.serverCpuUsPerCall === null ? '-' : fixed(outcome.serverCpuUsPerCall, 2);
  let versus = '-';
  if (system === BASELINE) versus = '(reference)';
  else if (comparison !== undefined) {
    versus = `messages/s ${fixed(comparison.throughputRatio * 100, 0)}%`;
    if (comparison.targetMet !== undefined) versus += `  ${comparison.targetMet ? 'PASS' : 'MISS'}`;
  }
  return [
    system,
    int.format(outcome.callsPerSec),
    fixed(outcome.p50Ms, 1),
    fixed(outcome.p99Ms, 1),
    rss,
    `${server} + ${fixed(outcome.clientCpuUsPerCall, 2)}`,
    String(outcome.errors),
    versus,
  ];
}

function besideRow(system: string, outcome: Ok): string[] {
  const alone = outcome.alone;
  return [
    system,
    alone === undefined ? '-' : int.format(alone.callsPerSec),
    alone === undefined ? '-' : fixed(alone.p50Ms, 3),
    alone === undefined ? '-' : fixed(alone.p99Ms, 3),
    int.format(outcome.callsPerSec),
    fixed(outcome.p50Ms, 3),
    fixed(outcome.p99Ms, 3),
    alone === undefined ? '-' : `${fixed(outcome.p99Ms / alone.p99Ms, 2)}x`,
    outcome.streamMessagesPerSec === undefined ? '-' : int.format(outcome.streamMessagesPerSec),
    String(outcome.errors),
  ];
}

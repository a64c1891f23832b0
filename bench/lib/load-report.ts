/**
 * The tables of S4 (large payloads: MiB/s each way and CPU per MiB on both sides) and S5 (many
 * client processes: total calls/s, each client's calls/s and their spread).
 */
import {
  BASELINE,
  type Comparison,
  firstLine,
  fixed,
  int,
  renderTable,
  type ScenarioReport,
  type SystemOutcome,
} from './report.js';
import type { Scenario } from './scenarios.js';

type Ok = Extract<SystemOutcome, { ok: true }>;

const MIB = 2 ** 20;

function failedRow(system: string, outcome: Exclude<SystemOutcome, Ok>, columns: number): string[] {
  const blank = Array.from({ length: columns - 3 }, () => '');
  return [system, outcome.unsupported === true ? '-' : 'FAILED', ...blank, firstLine(outcome.error)];
}

function versus(system: string, comparison: Comparison | undefined, what: string): string {
  if (system === BASELINE) return '(reference)';
  if (comparison === undefined) return '-';
  const text = `${what} ${fixed(comparison.throughputRatio * 100, 0)}%`;
  return comparison.targetMet === undefined ? text : `${text}  ${comparison.targetMet ? 'PASS' : 'MISS'}`;
}

/** S4: `payloadBytes` each way per call; MiB/s is the payload echoed per second (each way). */
export function formatBytesScenario(report: ScenarioReport, scenario: Scenario): string {
  const payload = scenario.payloadBytes ?? 1;
  const lines = [
    `${report.scenario}  ${report.description}`,
    `    ${int.format(report.calls)} calls of ${int.format(payload)} bytes each way, ${int.format(report.concurrency)} in flight, ` +
      `${int.format(report.warmupCalls)} warm-up calls; target: ${report.target}`,
  ];
  const header = [
    'system',
    'MiB/s each way',
    'calls/s',
    'p50 ms',
    'p99 ms',
    'server RSS MB',
    'CPU ms/MiB srv+cli',
    'errors',
    'vs baseline',
  ];
  const rows: string[][] = [];
  for (const [system, outcome] of Object.entries(report.results)) {
    if (!outcome.ok) {
      rows.push(failedRow(system, outcome, header.length));
      continue;
    }
    const perMib = (usPerCall: number) => fixed((usPerCall / 1000) * (MIB / payload), 2);
    rows.push([
      system,
      fixed((outcome.callsPerSec * payload) / MIB, 0),
      int.format(outcome.callsPerSec),
      fixed(outcome.p50Ms, 2),
      fixed(outcome.p99Ms, 2),
      outcome.serverPeakRssBytes === null ? '-' : fixed(outcome.serverPeakRssBytes / MIB, 1),
      `${outcome.serverCpuUsPerCall === null ? '-' : perMib(outcome.serverCpuUsPerCall)} + ${perMib(outcome.clientCpuUsPerCall)}`,
      String(outcome.errors),
      versus(system, report.versusBaseline[system], 'MiB/s'),
    ]);
  }
  lines.push(...renderTable(header, rows));
  return lines.join('\n');
}

/** S5: the total over every client process, the slowest and fastest client, and their spread. */
export function formatManyClientsScenario(report: ScenarioReport, scenario: Scenario): string {
  const lines = [
    `${report.scenario}  ${report.description}`,
    `    ${scenario.clients ?? 1} clients x ${scenario.connections ?? 1} connections, ${int.format(report.concurrency)} in flight per client, ` +
      `${int.format(scenario.durationMs ?? 0)} ms window after ${int.format(report.warmupCalls)} warm-up calls each; target: ${report.target}`,
  ];
  const header = [
    'system',
    'total calls/s',
    'client min',
    'client max',
    'spread min/max',
    'p99 ms (worst)',
    'server RSS MB',
    'CPU µs/call srv+cli',
    'errors',
    'vs baseline',
  ];
  const rows: string[][] = [];
  for (const [system, outcome] of Object.entries(report.results)) {
    if (!outcome.ok) {
      rows.push(failedRow(system, outcome, header.length));
      continue;
    }
    const rates = (outcome.perClient ?? []).map((client) => client.callsPerSec);
    const comparison = report.versusBaseline[system];
    rows.push([
      system,
      int.format(outcome.callsPerSec),
      rates.length === 0 ? '-' : int.format(Math.min(...rates)),
      rates.length === 0 ? '-' : int.format(Math.max(...rates)),
      outcome.spread === undefined ? '-' : fixed(outcome.spread, 3),
      fixed(outcome.p99Ms, 2),
      outcome.serverPeakRssBytes === null ? '-' : fixed(outcome.serverPeakRssBytes / 2 ** 20, 1),
      `${outcome.serverCpuUsPerCall === null ? '-' : fixed(outcome.serverCpuUsPerCall, 1)} + ${fixed(outcome.clientCpuUsPerCall, 1)}`,
      String(outcome.errors),
      versus(system, comparison, 'total calls/s'),
    ]);
  }
  lines.push(...renderTable(header, rows));
  return lines.join('\n');
}

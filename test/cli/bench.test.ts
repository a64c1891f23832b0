/**
 * `callisto bench`, the built binary, against real provider processes: bounded by --calls (the provider
 * counts exactly the calls made) or --duration, calls/s, percentiles, histogram and errors by code,
 * saved runs compared side by side, the first call stopping a hopeless run, Ctrl-C, no progress bar
 * off a terminal (test/cli/terminal.test.ts draws it on one).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import {
  buildCli,
  type CliBuild,
  cleanEnv,
  expectOneLineError,
  hasAnsi,
  jsonOf,
  type ProviderProcess,
  runCli,
  show,
  startProvider,
} from './support/cli.js';

let cli: CliBuild;
let provider: ProviderProcess;
let dir: string;
let registry: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-bench-'));
  registry = `file://${dir}`;
  [cli, provider] = await Promise.all([buildCli(), startProvider({ registry })]);
}, 120_000);

afterAll(async () => {
  await provider?.stop();
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

const bench = (args: string[]) => runCli(cli, ['bench', ...args]);
const file = (name: string) => path.join(dir, name);

interface Report {
  target: Record<string, string>;
  concurrency: number;
  limit: { calls?: number; durationMs?: number };
  ok: number;
  failed: number;
  durationMs: number;
  callsPerSecond: number;
  latencyMs: Record<string, number>;
  histogram: Array<{ upToMs: number | null; count: number }>;
  errors: Record<string, number>;
  interrupted: boolean;
}

describe('callisto bench', () => {
  it('makes exactly --calls calls (after one first call), then reports calls/s, percentiles and a histogram', async () => {
    const own = mkdtempSync(path.join(tmpdir(), 'callisto-cli-bench-count-'));
    const counted = await startProvider({ registry: `file://${own}` });
    let served: number | undefined;
    try {
      const result = await bench([
        'cli.UserService.getUser',
        '7',
        '--registry',
        `file://${own}`,
        '--calls',
        '400',
        '--concurrency',
        '4',
        '--warmup',
        '50',
        '--json',
      ]);
      expect(result.code, show(result)).toBe(0);
      expect(result.stderr).toBe(''); // no progress bar off a terminal
      const report = jsonOf(result) as unknown as Report;
      served = await counted.stop();
      expect(served).toBe(1 + 50 + 400); // the first call, the warm-up, the run: nothing more
      expect(report).toMatchObject({
        callistoBench: 1,
        target: {
          service: 'cli.UserService',
          method: 'getUser',
          version: '1.0.0',
          group: '',
          serializer: 'msgpack',
        },
        concurrency: 4,
        limit: { calls: 400 },
        warmupCalls: 50,
        ok: 400,
        failed: 0,
        errors: {},
        interrupted: false,
      });
      expect(report.target['via']).toBe(`registry file://${own}`);
      expect(report.callsPerSecond).toBeCloseTo((400 * 1_000) / report.durationMs, 3);
      const l = report.latencyMs;
      expect(l['min']).toBeGreaterThan(0);
      for (const [lower, higher] of [
        ['min', 'p50'],
        ['p50', 'p90'],
        ['p90', 'p99'],
        ['p99', 'p999'],
        ['p999', 'max'],
      ] as const) {
        expect(l[lower], `${lower} <= ${higher}`).toBeLessThanOrEqual(l[higher]! * 1.001);
      }
      expect(report.histogram.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(400);
    } finally {
      if (served === undefined) await counted.stop();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('prints the report for people: calls/s, latency percentiles, a histogram', async () => {
    const result = await bench(['cli.UserService.getUser', '7', '--url', provider.address, '--calls', '200']);
    expect(result.code, show(result)).toBe(0);
    expect(hasAnsi(result.stdout + result.stderr)).toBe(false);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`bench cli.UserService.getUser (1.0.0) via url ${provider.address}, msgpack`);
    expect(lines[1]).toBe('  concurrency 8, limit 200 calls');
    expect(lines[2]).toMatch(/^ {2}200 calls ok, 0 failed in \d+\.\d\d s: [\d,]+ calls\/s$/);
    expect(lines[3]).toMatch(
      /^ {2}latency ms: min [\d.]+ {2}mean [\d.]+ {2}p50 [\d.]+ {2}p90 [\d.]+ {2}p99 [\d.]+ {2}p99\.9 [\d.]+ {2}max [\d.]+$/,
    );
    expect(lines[4]).toBe('  histogram:');
    const rows = lines.slice(5);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).toMatch(/^ {3}(<=|>) [\d.]+ ms +█* +[\d,]+ +\d+\.\d%$/);
  });

  it('stops by itself after --duration', async () => {
    const result = await bench([
      'cli.UserService.getUser',
      '7',
      '--url',
      provider.address,
      '--duration',
      '0.6',
      '--concurrency',
      '2',
      '--json',
    ]);
    expect(result.code, show(result)).toBe(0);
    const report = jsonOf(result) as unknown as Report;
    expect(report.limit).toEqual({ durationMs: 600 });
    expect(report.durationMs).toBeGreaterThanOrEqual(600);
    expect(report.durationMs).toBeLessThan(600 + 5_000); // the calls in flight at the deadline end, no more start
    expect(report.ok).toBeGreaterThan(0);
  });

  it('counts failed calls by code; any failed call makes the exit code 1', async () => {
    const result = await bench([
      'cli.UserService.flaky',
      '--url',
      provider.address,
      '--calls',
      '100',
      '--json',
    ]);
    expect(result.code, show(result)).toBe(1);
    const report = jsonOf(result) as unknown as Report;
    expect(report.ok + report.failed).toBe(100);
    expect(report.failed).toBeGreaterThan(20);
    expect(report.errors).toEqual({ ProviderError: report.failed });
    const human = await bench(['cli.UserService.flaky', '--url', provider.address, '--calls', '20']);
    expect(human.code, show(human)).toBe(1);
    expect(human.stdout).toMatch(/errors by code:\n {3}ProviderError +\d+\n/);
  });

  it('puts two runs side by side: --compare with a saved run, and bench compare', async () => {
    const before = file('before.json');
    const first = await bench([
      'cli.UserService.getUser',
      '7',
      '--url',
      provider.address,
      '--calls',
      '200',
      '--out',
      before,
    ]);
    expect(first.code, show(first)).toBe(0);
    const saved = JSON.parse(readFileSync(before, 'utf8')) as Report;
    expect(saved.ok).toBe(200);

    const second = await bench([
      'cli.UserService.getUser',
      '7',
      '--url',
      provider.address,
      '--calls',
      '200',
      '--concurrency',
      '2',
      '--compare',
      before,
      '--out',
      file('after.json'),
    ]);
    expect(second.code, show(second)).toBe(0);
    const table = second.stdout
      .slice(second.stdout.indexOf('\n\n') + 2)
      .trimEnd()
      .split('\n');
    expect(table[0]).toMatch(
      new RegExp(`^\\s+${before.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+this run\\s+change$`),
    );
    expect(table.slice(1, 9).map((line) => line.split(/\s{2,}/)[0])).toEqual([
      'calls/s',
      'mean ms',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'failed calls',
    ]);
    expect(table[1]).toMatch(/^calls\/s\s+[\d,]+\s+[\d,]+\s+[+-]\d+\.\d%$/);
    expect(table[9]).toBe('note: the runs differ: concurrency 8 vs 2');

    const compared = await runCli(cli, ['bench', 'compare', before, file('after.json'), '--json']);
    expect(compared.code, show(compared)).toBe(0);
    const document = jsonOf(compared) as {
      comparison: Record<string, { before: number; after: number; change: number }>;
    };
    const rate = document.comparison['calls/s']!;
    const after = JSON.parse(readFileSync(file('after.json'), 'utf8')) as Report;
    expect(rate.before).toBe(saved.callsPerSecond);
    expect(rate.after).toBe(after.callsPerSecond);
    expect(rate.change).toBeCloseTo(after.callsPerSecond / saved.callsPerSecond - 1, 9);
    const human = await runCli(cli, ['bench', 'compare', before, file('after.json')]);
    expect(human.stdout).toMatch(/^p99 ms\s+[\d.]+\s+[\d.]+\s+[+-]\d+\.\d%$/m);
  });

  it('a file that is not a saved run, or a bad limit: one line, exit 2', async () => {
    writeFileSync(file('not-a-run.json'), '{"calls": 3}');
    expectOneLineError(
      await runCli(cli, ['bench', 'compare', file('not-a-run.json'), file('not-a-run.json')]),
      2,
      /not-a-run\.json is not a callisto bench result \(callistoBench: .*\); save a run with bench --out/,
    );
    expectOneLineError(
      await bench(['cli.UserService.getUser', '--url', provider.address, '--compare', file('missing.json')]),
      2,
      /cannot read the benchmark file .*missing\.json/,
    );
    expectOneLineError(
      await bench(['cli.UserService.getUser', '--url', provider.address, '--calls', '0']),
      2,
      /--calls <n>.*'0' is invalid\. expected an integer from 1 to 10000000/,
    );
    expectOneLineError(
      await bench(['cli.UserService.getUser', '--url', provider.address, '--duration', '7200']),
      2,
      /--duration.*at most 3600/,
    );
  });

  it('stops after the first call when the calls cannot work (unknown method or service)', async () => {
    const method = await bench(['cli.UserService.getUsr', '--registry', registry, '--calls', '100000']);
    expectOneLineError(method, 1, /^error: the first call failed, no benchmark run: MethodNotFound: /);
    const service = await bench(['cli.Nope.x', '--registry', registry, '--calls', '100000']);
    expectOneLineError(
      service,
      1,
      /the first call failed, no benchmark run: NoProvider: .*nothing registered for cli\.Nope/,
    );
  });

  it('Ctrl-C stops a run early and still reports it; exit 130', async () => {
    const child = spawn(
      process.execPath,
      [
        cli.main,
        'bench',
        'cli.UserService.slow',
        '20',
        '--registry',
        registry,
        '--duration',
        '120',
        '--json',
      ],
      { cwd: cli.cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // its consumer entry appears once it refers to the service, after it began to handle Ctrl-C
    const consumers = path.join(dir, 'callisto', 'cli.UserService:1.0.0', 'consumers');
    mkdirSync(consumers, { recursive: true });
    await waitFor(() => readdirSync(consumers).some((name) => name.includes(`:${child.pid}:`)), 20_000);
    child.kill('SIGINT');
    const code = await exit;
    expect(code, stdout).toBe(130);
    const report = jsonOf({ code, stdout, stderr: '', ms: 0 }) as unknown as Report;
    expect(report.interrupted).toBe(true);
    expect(report.durationMs).toBeLessThan(60_000);
    expect(readdirSync(consumers).filter((name) => name.endsWith('.json'))).toEqual([]); // closed cleanly
  });
});

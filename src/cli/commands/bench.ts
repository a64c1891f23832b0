/**
 * `callisto bench <service>.<method> [args...]`: calls as fast as `--concurrency` workers can, for
 * `--calls` calls or `--duration` seconds, then calls/s, latency percentiles, a histogram and errors by
 * code. `bench compare a.json b.json` (or `--compare previous.json`) puts two runs side by side.
 */

import { writeFileSync } from 'node:fs';
import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { RpcError } from '../../index.js';
import { parseAttachments, parseCallArguments, parseCallTarget } from '../../tools/call-target.js';
import { CommandExit, ExitCode, usageError } from '../../tools/exit-codes.js';
import { describeRpcError, exitCodeOf, rpcErrorData } from '../../tools/rpc-failure.js';
import { type BenchReport, buildReport, readBenchReport } from '../bench/bench-report.js';
import { comparisonData, printComparison, printReport } from '../bench/format-report.js';
import { type BenchRun, runBench } from '../bench/run-bench.js';
import { openCliApp } from '../cli-app.js';
import { addCommonOptions, count, seconds } from '../options.js';
import { type CliIo, createOutput, type Output } from '../output.js';
import { checkWhere, describeVia, remoteMethod } from '../remote-method.js';
import { addTargetOptions, type TargetOptions } from './call.js';

interface BenchOptions extends TargetOptions {
  concurrency: number;
  calls?: number;
  duration?: number;
  warmup: number;
  out?: string;
  compare?: string;
}

/** Calls a run makes when neither --calls nor --duration is given. */
export const DEFAULT_BENCH_CALLS = 1_000;

/** Codes of a first call that show the calls cannot work: the benchmark stops there. */
const HOPELESS = new Set([
  'NoProvider',
  'Network',
  'ServiceNotFound',
  'MethodNotFound',
  'BadRequest',
  'Serialization',
  'Unauthorized',
]);

const EXAMPLES = `
Examples:
  $ callisto bench example.UserService.getUser 7 --registry etcd://127.0.0.1:2379 --concurrency 32 --calls 100000
  $ callisto bench example.UserService.getUser 7 --url 127.0.0.1:20880 --duration 10 --out before.json
  $ callisto bench example.UserService.getUser 7 --url 127.0.0.1:20880 --duration 10 --compare before.json
  $ callisto bench compare before.json after.json

Stops by itself after --calls calls or --duration seconds, whichever comes first (default: ${DEFAULT_BENCH_CALLS}
calls); Ctrl-C stops it early and still reports (exit 130). A first call is made before the clock starts:
when it shows the calls cannot work (no provider, unknown service or method, unreachable, bad arguments)
the benchmark stops there. calls/s and latency count successful calls; failed calls are counted by error
code, and any failed call makes the exit code 1. A progress bar is drawn on a terminal only.`;

export function benchCommand(io: CliIo): Command {
  const command = new Command('bench')
    .description('benchmark one method: calls/s, latency percentiles and histogram, errors by code')
    .argument('<service.method>', 'e.g. example.UserService.getUser')
    .argument('[args...]', 'the arguments of every call, one JSON value each');
  addTargetOptions(command)
    .option('--concurrency <n>', 'calls in flight at once', count(10_000), 8)
    .option(
      '--calls <n>',
      `stop after this many calls (default ${DEFAULT_BENCH_CALLS} without --duration)`,
      count(),
    )
    .option('--duration <seconds>', 'stop starting calls after this long (at most 3600)', seconds)
    .option('--warmup <n>', 'calls made (and not counted) before the measured run', count(), 0)
    .option('--out <file>', 'also write the result as JSON to this file (for --compare)')
    .option('--compare <file>', 'print this run next to a previous one saved with --out');
  addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((target: string, args: string[], options: BenchOptions) =>
      runBenchCommand(io, target, args, options),
    );
  command.addCommand(compareCommand(io));
  return command;
}

function compareCommand(io: CliIo): Command {
  return new Command('compare')
    .description('print two saved benchmark results side by side, with the change')
    .argument('<before.json>', 'the earlier run (bench --out)')
    .argument('<after.json>', 'the later run')
    .option('--json', 'print one JSON document on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ callisto bench example.UserService.getUser 7 --url 127.0.0.1:20880 --calls 100000 --out before.json
  $ callisto bench example.UserService.getUser 7 --url 127.0.0.1:20880 --calls 100000 --out after.json
  $ callisto bench compare before.json after.json

Prints calls/s, mean, p50, p90, p99, p99.9 and max latency, and failed calls, of both runs with the
change (green when better, red when worse by more than 2%), and notes when the runs differ (method,
concurrency, serializer, where the calls went).`,
    )
    .action((beforeFile: string, afterFile: string, options: { json?: boolean }) => {
      const output = createOutput(io, { json: options.json ?? false });
      const [before, after] = [readBenchReport(beforeFile), readBenchReport(afterFile)];
      if (output.json) return output.document({ before, after, comparison: comparisonData(before, after) });
      printComparison(output, before, after, [beforeFile, afterFile]);
    });
}

async function runBenchCommand(io: CliIo, targetText: string, argTexts: string[], options: BenchOptions) {
  const output = createOutput(io, { json: options.json ?? false });
  // Ctrl-C from the start on ends the run early with a report, never mid-write
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    await benchWith(output, controller.signal, targetText, argTexts, options);
  } finally {
    process.off('SIGINT', interrupt);
  }
}

async function benchWith(
  output: Output,
  signal: AbortSignal,
  targetText: string,
  argTexts: string[],
  options: BenchOptions,
) {
  const target = parseCallTarget(targetText);
  const args = parseCallArguments(argTexts);
  const attachments = parseAttachments(options.attachment ?? []);
  checkWhere(options);
  const previous = options.compare === undefined ? undefined : readBenchReport(options.compare);
  const calls = options.calls ?? (options.duration === undefined ? DEFAULT_BENCH_CALLS : undefined);
  const durationMs = options.duration === undefined ? undefined : Math.round(options.duration * 1_000);
  const app = await openCliApp({ ...options, timeoutMs: options.timeout }, output);
  try {
    const method = remoteMethod(
      app,
      target,
      { ...options, timeoutMs: options.timeout, attachments },
      { oneAttempt: false },
    );
    const call = () => method(args);
    await firstCall(output, target, call);
    if (options.warmup > 0)
      await runBench(call, { concurrency: options.concurrency, calls: options.warmup }).done;
    const run = runBench(call, { concurrency: options.concurrency, calls, durationMs }, signal);
    const outcome = await withProgressBar(output, run, { calls, durationMs });
    const report = buildReport(
      {
        service: target.service,
        method: target.method,
        version: options.version ?? '1.0.0',
        group: options.group ?? '',
        via: describeVia(app, options),
        serializer: app.config.consumer.serializer,
      },
      { concurrency: options.concurrency, calls, durationMs, warmupCalls: options.warmup },
      outcome,
    );
    if (options.out !== undefined) writeReport(options.out, report);
    print(output, report, previous, options.compare);
    if (report.interrupted) throw new CommandExit(ExitCode.Interrupted);
    if (report.failed > 0) throw new CommandExit(ExitCode.Failed);
  } finally {
    await app.close();
  }
}

/** The call before the clock starts; stops the benchmark when it shows the calls cannot work. */
async function firstCall(
  output: Output,
  target: { service: string; method: string },
  call: () => Promise<unknown>,
) {
  try {
    await call();
  } catch (error) {
    if (!RpcError.is(error) || !HOPELESS.has(error.code)) return;
    if (output.json) output.document({ ok: false, ...target, error: rpcErrorData(error) });
    output.note(
      `${output.styleErr('red', 'error:')} the first call failed, no benchmark run: ${describeRpcError(error)}`,
    );
    throw new CommandExit(exitCodeOf(error));
  }
}

function writeReport(file: string, report: BenchReport): void {
  try {
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  } catch (error) {
    throw usageError(`cannot write ${file}: ${(error as Error).message}`);
  }
}

function print(
  output: Output,
  report: BenchReport,
  previous: BenchReport | undefined,
  previousFile?: string,
) {
  if (output.json) {
    return output.document(
      previous ? { ...report, previous, comparison: comparisonData(previous, report) } : report,
    );
  }
  printReport(output, report);
  if (previous) {
    output.line();
    printComparison(output, previous, report, [previousFile ?? 'previous', 'this run']);
  }
}

/** Draws a progress bar on stderr while the run lasts, when stderr is a terminal. */
async function withProgressBar(
  output: Output,
  run: BenchRun,
  limit: { calls?: number | undefined; durationMs?: number | undefined },
): Promise<Awaited<BenchRun['done']>> {
  if (!output.interactive) return run.done;
  const byCalls = limit.durationMs === undefined;
  const bar = new SingleBar({
    stream: output.io.stderr,
    format: `bench {bar} {percentage}% | {started} calls | {rate} calls/s | {failed} failed | {elapsed} s`,
    barsize: 30,
    hideCursor: true,
    clearOnComplete: true,
    fps: 10,
  });
  const total = byCalls ? (limit.calls ?? 1) : (limit.durationMs ?? 1);
  const payload = () => {
    const p = run.progress();
    return {
      value: byCalls ? p.started : Math.min(total, Math.round(p.elapsedMs)),
      tokens: {
        started: p.started,
        rate: p.elapsedMs > 0 ? Math.round((p.ok * 1_000) / p.elapsedMs) : 0,
        failed: p.failed,
        elapsed: (p.elapsedMs / 1_000).toFixed(1),
      },
    };
  };
  const first = payload();
  bar.start(total, first.value, first.tokens);
  const timer = setInterval(() => {
    const next = payload();
    bar.update(next.value, next.tokens);
  }, 100);
  try {
    return await run.done;
  } finally {
    clearInterval(timer);
    bar.stop();
  }
}

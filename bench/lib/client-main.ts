/**
 * The entry point of every system's client script: parses the arguments the harness passes
 * (`<scenario> <port> <calls> <concurrency>`), connects, checks one call, runs the scenario with the
 * shared driver and prints one JSON line ({@link ScenarioResult}) on stdout, preceded by a `MEASURE`
 * line when the measured phase starts.
 */
import { runScenario, type ScenarioResult } from './driver.js';
import {
  type BenchService,
  type BenchStreamService,
  checkResult,
  findScenario,
  type Scenario,
  warmupCallsFor,
} from './scenarios.js';
import { runBesideStreamScenario, runStreamScenario } from './stream-driver.js';

/** Printed on stdout when the measured phase starts (the harness samples the server's CPU time then). */
export const MEASURE_START_LINE = 'MEASURE';

/** A connected client of one system. */
export interface BenchClient extends BenchService, Partial<BenchStreamService> {
  /** Closes the connection(s); the process exits right after anyway. */
  close(): Promise<void> | void;
}

export interface ClientArgs {
  scenario: string;
  port: number;
  calls: number;
  concurrency: number;
}

export function parseClientArgs(argv: readonly string[]): ClientArgs {
  const [scenario, port, calls, concurrency] = argv;
  const int = (name: string, text: string | undefined): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`client: ${name} must be a positive integer, got "${text}"`);
    }
    return value;
  };
  if (scenario === undefined) throw new Error('usage: client.ts <scenario> <port> <calls> <concurrency>');
  return {
    scenario,
    port: int('port', port),
    calls: int('calls', calls),
    concurrency: int('concurrency', concurrency),
  };
}

/** What a client prints instead of a result when its system cannot run the scenario (no streams). */
export interface UnsupportedResult {
  unsupported: string;
}

function runKind(
  scenario: Scenario,
  args: ClientArgs,
  call: (i: number) => Promise<unknown>,
  ticks: BenchStreamService['ticks'] | undefined,
): Promise<ScenarioResult> {
  const warmupCalls = warmupCallsFor(args.calls, Number(process.env.BENCH_SCALE ?? '1') || 1);
  const onMeasureStart = () => process.stdout.write(`${MEASURE_START_LINE}\n`);
  if (scenario.kind === 'unary' || ticks === undefined) {
    return runScenario({
      call,
      calls: args.calls,
      concurrency: args.concurrency,
      warmupCalls,
      onMeasureStart,
    });
  }
  if (scenario.kind === 'stream') {
    return runStreamScenario({
      open: ticks,
      messages: args.calls,
      streams: args.concurrency,
      warmupMessages: Math.ceil(args.calls * 0.05),
      onMeasureStart,
    });
  }
  return runBesideStreamScenario({
    call,
    calls: args.calls,
    concurrency: args.concurrency,
    warmupCalls,
    open: ticks,
    onMeasureStart,
  });
}

/** Runs one scenario against the server on `port`, prints the result and exits. */
export async function runClientMain(connect: (port: number) => Promise<BenchClient>): Promise<void> {
  try {
    const args = parseClientArgs(process.argv.slice(2));
    const scenario = findScenario(args.scenario);
    const client = await connect(args.port);
    const ticks = client.ticks?.bind(client);
    if (scenario.kind !== 'unary' && ticks === undefined) {
      await client.close();
      const unsupported: UnsupportedResult = { unsupported: 'no server streams' };
      process.stdout.write(`${JSON.stringify(unsupported)}\n`, () => process.exit(0));
      return;
    }
    const call =
      scenario.method === 'say' ? (_i: number) => client.say('test') : (i: number) => client.getUser(i);
    if (scenario.kind !== 'stream') checkResult(scenario.method, 7, await call(7));
    const result = await runKind(scenario, args, call, ticks);
    await client.close();
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  } catch (error) {
    process.stderr.write(
      `client failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
    );
    process.exit(1);
  }
}

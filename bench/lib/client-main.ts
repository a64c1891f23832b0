/**
 * The entry point of every system's client script: parses the arguments the harness passes
 * (`<scenario> <port> <calls> <concurrency>`), connects, checks one call, runs the scenario with the
 * shared driver and prints one JSON line ({@link ScenarioResult}) on stdout, preceded by a `MEASURE`
 * line when the measured phase starts.
 */
import { runScenario, type ScenarioResult } from './driver.js';
import { type BenchService, checkResult, findScenario, warmupCallsFor } from './scenarios.js';

/** Printed on stdout when the measured phase starts (the harness samples the server's CPU time then). */
export const MEASURE_START_LINE = 'MEASURE';

/** A connected client of one system. */
export interface BenchClient extends BenchService {
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

/** Runs one scenario against the server on `port`, prints the result and exits. */
export async function runClientMain(connect: (port: number) => Promise<BenchClient>): Promise<void> {
  try {
    const args = parseClientArgs(process.argv.slice(2));
    const scenario = findScenario(args.scenario);
    const client = await connect(args.port);
    const call =
      scenario.method === 'say' ? (_i: number) => client.say('test') : (i: number) => client.getUser(i);
    checkResult(scenario.method, 7, await call(7));
    const result: ScenarioResult = await runScenario({
      call,
      calls: args.calls,
      concurrency: args.concurrency,
      warmupCalls: warmupCallsFor(args.calls, Number(process.env.BENCH_SCALE ?? '1') || 1),
      onMeasureStart: () => process.stdout.write(`${MEASURE_START_LINE}\n`),
    });
    await client.close();
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  } catch (error) {
    process.stderr.write(
      `client failed: ${error instanceof Error ? (error.stack ?? error.message) : error}\n`,
    );
    process.exit(1);
  }
}

/**
 * The entry point of every system's client script: parses the arguments the harness passes
 * (`<scenario> <port> <calls> <concurrency> [connections] [durationMs]`), connects, checks one call,
 * runs the scenario with the shared driver and prints one JSON line ({@link ScenarioResult}) on
 * stdout, preceded by a `MEASURE` line when the measured phase starts.
 *
 * S5 (many clients): after its warm-up the client prints `WARM` and waits for a line `GO` on its stdin,
 * so that every client process measures the same window ({@link measureWindow}).
 */
import { createInterface } from 'node:readline';
import { measureWindow, runScenario, type ScenarioResult } from './driver.js';
import {
  type BenchBytesService,
  type BenchService,
  type BenchStreamService,
  benchPayload,
  checkBytes,
  checkResult,
  findScenario,
  type Scenario,
  warmupCallsFor,
  warmupMessagesFor,
} from './scenarios.js';
import { runBesideStreamScenario, runStreamScenario } from './stream-driver.js';

/** Printed on stdout when the measured phase starts (the harness samples the server's CPU time then). */
export const MEASURE_START_LINE = 'MEASURE';
/** S5: printed once warmed up; the client then waits for {@link GO_LINE} on stdin. */
export const WARM_LINE = 'WARM';
export const GO_LINE = 'GO';

/** A connected client of one system. */
export interface BenchClient extends BenchService, Partial<BenchStreamService>, Partial<BenchBytesService> {
  /**
   * The connections it opened, when it was asked for several (S5); a client that leaves it out (or
   * opened another number) cannot run S5 and answers `{unsupported}`.
   */
  readonly connections?: number;
  /** Closes the connection(s); the process exits right after anyway. */
  close(): Promise<void> | void;
}

/** What the harness asks of a client besides the port. */
export interface ClientSetup {
  /** Connections to open to the server (1 but for S5); calls go over them in turn. */
  readonly connections: number;
}

export interface ClientArgs {
  scenario: string;
  port: number;
  calls: number;
  concurrency: number;
  /** S5: connections to open; 1 otherwise. */
  connections: number;
  /** S5: the measured window, ms. */
  durationMs: number;
}

export function parseClientArgs(argv: readonly string[]): ClientArgs {
  const [scenario, port, calls, concurrency, connections = '1', durationMs = '1'] = argv;
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
    connections: int('connections', connections),
    durationMs: int('durationMs', durationMs),
  };
}

/** Resolves when the harness writes `GO` on stdin. */
function waitForGo(): Promise<void> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() !== GO_LINE) return;
      lines.close();
      resolve();
    });
    process.stdin.once('end', () => reject(new Error('stdin closed before GO')));
  });
}

/** S5: the warm-up, then `WARM`, then the window once the harness says `GO`. */
async function runManyClients(
  args: ClientArgs,
  call: (i: number) => Promise<unknown>,
): Promise<ScenarioResult> {
  await runScenario({ call, calls: args.calls, concurrency: args.concurrency, warmupCalls: 0 });
  process.stdout.write(`${WARM_LINE}\n`);
  await waitForGo();
  process.stdout.write(`${MEASURE_START_LINE}\n`);
  return measureWindow({ call, concurrency: args.concurrency, durationMs: args.durationMs });
}

/** Why `client` cannot run `scenario`, or undefined when it can. */
function unsupportedReason(scenario: Scenario, client: BenchClient, args: ClientArgs): string | undefined {
  if ((scenario.kind === 'stream' || scenario.kind === 'unary-beside-stream') && client.ticks === undefined) {
    return 'no server streams';
  }
  if (scenario.kind === 'bytes' && client.echoBytes === undefined) return 'no echoBytes';
  if (scenario.kind === 'many-clients' && client.connections !== args.connections) {
    return `cannot open ${args.connections} connections`;
  }
  return undefined;
}

/** The call the driver makes `i` times for `scenario`, checking what a bytes call answers. */
function callFor(scenario: Scenario, client: BenchClient): (i: number) => Promise<unknown> {
  if (scenario.method === 'say') return (_i: number) => client.say('test');
  if (scenario.method !== 'echoBytes') return (i: number) => client.getUser(i);
  const payload = benchPayload(scenario.payloadBytes ?? 1024);
  const echo = client.echoBytes!.bind(client);
  return (i: number) =>
    echo(payload).then((answer) => {
      if (answer.length !== payload.length) checkBytes(i, answer, payload);
      return answer;
    });
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
  if (scenario.kind === 'many-clients') return runManyClients(args, call);
  if (scenario.kind === 'unary' || scenario.kind === 'bytes' || ticks === undefined) {
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
      warmupMessages: warmupMessagesFor(args.calls),
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
export async function runClientMain(
  connect: (port: number, setup: ClientSetup) => Promise<BenchClient>,
): Promise<void> {
  try {
    const args = parseClientArgs(process.argv.slice(2));
    const scenario = findScenario(args.scenario);
    const client = await connect(args.port, { connections: args.connections });
    const ticks = client.ticks?.bind(client);
    const reason = unsupportedReason(scenario, client, args);
    if (reason !== undefined) {
      await client.close();
      const unsupported: UnsupportedResult = { unsupported: reason };
      process.stdout.write(`${JSON.stringify(unsupported)}\n`, () => process.exit(0));
      return;
    }
    const call = callFor(scenario, client);
    if (scenario.kind === 'bytes') {
      const payload = benchPayload(scenario.payloadBytes ?? 1024);
      checkBytes(7, await client.echoBytes!(payload), payload);
    } else if (scenario.kind !== 'stream') checkResult(scenario.method, 7, await call(7));
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

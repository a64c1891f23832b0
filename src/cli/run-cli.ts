/**
 * Runs the program once and turns how it ended into an exit code (exit-codes.ts). A mistake of the
 * user's is one line, `error: …`, never a stack trace; only an unexpected failure of the tool itself
 * shows its stack, and only with --verbose.
 */
import { CommanderError } from 'commander';
import { ConfigError, RpcError } from '../index.js';
import { CliError, CommandExit, ExitCode, type ExitCodeValue } from '../tools/exit-codes.js';
import { describeRpcError, exitCodeOf } from '../tools/rpc-failure.js';
import { configMistake } from './cli-app.js';
import { type CliIo, createOutput } from './output.js';
import { createProgram } from './program.js';

export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCodeValue> {
  const program = createProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.Ok;
  } catch (error) {
    return report(error, io, argv.includes('--verbose'));
  }
}

function report(error: unknown, io: CliIo, verbose: boolean): ExitCodeValue {
  const output = createOutput(io, { json: false });
  // one line, whatever the message (a YAML parser's, for one, comes with a code frame)
  const say = (message: string) =>
    io.stderr.write(`${output.styleErr('red', 'error:')} ${message.trim().replace(/\s*\n\s*/g, ' ')}\n`);
  if (error instanceof CommanderError) {
    // commander has printed its message (or the help, or the version)
    return error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
  }
  if (error instanceof CommandExit) return error.exitCode;
  if (error instanceof CliError) {
    say(error.message);
    return error.exitCode;
  }
  if (error instanceof ConfigError) {
    const mistake = configMistake(error);
    say(mistake.message);
    return mistake.exitCode;
  }
  if (RpcError.is(error)) {
    say(describeRpcError(error));
    return exitCodeOf(error);
  }
  const message = error instanceof Error ? error.message : String(error);
  say(
    `${message} (an unexpected failure of the callisto command${verbose ? '' : '; --verbose shows where'})`,
  );
  if (verbose && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return ExitCode.Failed;
}

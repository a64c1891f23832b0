/**
 * Exit codes scripts can trust (README "Command line"), and the one error type commands throw for a
 * failure the user should read as one line, without a stack trace.
 */

export const ExitCode = {
  /** Done; for doctor, nothing wrong found. */
  Ok: 0,
  /** The call failed (remote or business error, timeout, unknown service or method), a benchmark had failed calls, doctor found a problem, ls found nothing under the name. */
  Failed: 1,
  /** The command line or the configuration is wrong (unknown option, malformed JSON argument, bad address or value). */
  Usage: 2,
  /** The registry or the provider could not be reached. */
  Unreachable: 3,
  /** Stopped by Ctrl-C (SIGINT); a benchmark still reports what it measured. */
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure told to the user as `error: <message>`, ending the command with `exitCode`. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
  }
}

/** A mistake on the command line: exit code 2. */
export function usageError(message: string): CliError {
  return new CliError(ExitCode.Usage, message);
}

/** A registry or provider that cannot be reached: exit code 3. */
export function unreachableError(message: string): CliError {
  return new CliError(ExitCode.Unreachable, message);
}

/** Ends a command with `exitCode` after it has said everything itself (a report, a JSON document). */
export class CommandExit extends Error {
  override name = 'CommandExit';
  constructor(readonly exitCode: ExitCodeValue) {
    super(`exit ${exitCode}`);
  }
}

/** Option parsers and the options several commands share, each defined once. */
import { type Command, InvalidArgumentError, Option } from 'commander';

/** Largest count `--calls`, `--concurrency` and the like accept. */
const MAX_COUNT = 10_000_000;

/** An integer from `min` to `max`, for commander. */
export function integerIn(min: number, max: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    }
    return value;
  };
}

/** A positive number of milliseconds (at most a day). */
export const milliseconds = integerIn(1, 86_400_000);

/** A positive count (at most ten million). */
export const count = (max = MAX_COUNT) => integerIn(1, max);

/** Seconds, possibly fractional, more than 0 and at most an hour. */
export function seconds(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 3600) {
    throw new InvalidArgumentError('expected seconds, more than 0 and at most 3600');
  }
  return value;
}

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export interface CommonOptions {
  config?: string;
  json?: boolean;
  verbose?: boolean;
}

/** `--config <file>`, `--json`, `--verbose`. */
export function addCommonOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--config <file>',
        'configuration file (default: callisto.config.yaml|yml|json or callisto.properties in the working directory, or CALLISTO_CONFIG)',
      ),
    )
    .option('--json', 'print one JSON document on stdout, for scripts')
    .option('--verbose', "print the framework's log lines on stderr");
}

/** `--registry <address>`. */
export function addRegistryOption(command: Command, what: string): Command {
  return command.option(
    '--registry <address>',
    `${what} (file://dir, etcd://host:2379, zookeeper://host:2181, redis://host:6379; default: the configured one)`,
  );
}

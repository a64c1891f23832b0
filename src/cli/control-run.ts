/**
 * What `disable`, `enable`, `weight` and `mock` share: the registry (`--registry` or the configured one,
 * connected within `--timeout` or exit 3), the service key (`--version`, `--group`), one change through
 * the registry's runtime control (callisto/registry `createRegistryControl`), and the overrides in force
 * after it, printed as a line per override or, with `--json`, as one document.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { createRegistryControl, type RegistryControl, type ServiceOverrides } from '../registry/index.js';
import { CliError, ExitCode, unreachableError, usageError } from '../tools/exit-codes.js';
import { openCliApp } from './cli-app.js';
import { addCommonOptions, addRegistryOption, type CommonOptions, milliseconds } from './options.js';
import { type CliIo, createOutput, type Output } from './output.js';
import { openRegistry, registryAddressOf } from './registry-connection.js';

export interface ControlOptions extends CommonOptions {
  registry?: string;
  version: string;
  group?: string;
  timeout: number;
}

/** `host:port`, for commander. */
export function providerAddress(text: string): string {
  const match = /^([^\s:]+|\[[^\]\s]+\]):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65535) {
    throw new InvalidArgumentError('expected host:port, as `callisto ls <service>` lists the providers');
  }
  return text;
}

/** `--registry`, `--version`, `--group`, `--timeout` and the common options. */
export function addControlOptions(command: Command): Command {
  addRegistryOption(command, 'the registry that holds the service')
    .option('--version <version>', 'service version', '1.0.0')
    .option('--group <group>', 'service group (default: none)')
    .option('--timeout <ms>', 'how long the registry may take to connect and answer', milliseconds, 5_000);
  return addCommonOptions(command);
}

/** One sentence per override in force; `note` adds to the sentences that name a provider. */
export function describeOverrides(
  overrides: ServiceOverrides,
  note: (provider: string) => string = () => '',
): string[] {
  const lines: string[] = [];
  if (overrides.disabled) lines.push('service disabled');
  for (const provider of overrides.disabledProviders)
    lines.push(`provider ${provider} disabled${note(provider)}`);
  for (const [provider, weight] of Object.entries(overrides.weights)) {
    lines.push(`provider ${provider} weight ${weight}${note(provider)}`);
  }
  for (const [method, mode] of Object.entries(overrides.mocks)) lines.push(`method ${method} mock ${mode}`);
  return lines;
}

/** What a control command does, for `runControl`. */
export interface ControlAction {
  /** The command, as `--json` output names it (`weight`, `overrides clear`). */
  readonly command: string;
  /** What it does, for messages: `cannot <doing>: …`. */
  readonly doing: string;
  /** The change, through the registry's control, for the service's version and group. */
  readonly change: (control: RegistryControl, key: { version: string; group: string }) => Promise<void>;
  /** The sentence printed once it is done (a function: read after the change). */
  readonly done: string | (() => string);
}

/**
 * Opens the registry, runs `action.change` through its control, then prints `action.done` and the
 * overrides in force. A refused change (an unregistered provider) exits 1; a bad value 2; an unreachable
 * registry 3.
 */
export async function runControl(
  io: CliIo,
  service: string,
  options: ControlOptions,
  action: ControlAction,
): Promise<void> {
  const { change, done } = action;
  const output: Output = createOutput(io, { json: options.json ?? false });
  const app = await openCliApp(options, output);
  try {
    const opened = await openRegistry(app, registryAddressOf(app), options.timeout, (m) => output.warn(m));
    const control = createRegistryControl(opened.address, { open: async () => opened.registry });
    const key = { version: options.version, group: options.group ?? '' };
    try {
      try {
        await change(control, key);
      } catch (error) {
        if (error instanceof TypeError) throw usageError(error.message);
        if (/timed out/.test((error as Error).message)) {
          throw unreachableError(`cannot ${action.doing} at ${opened.location}: ${(error as Error).message}`);
        }
        throw new CliError(ExitCode.Failed, `cannot ${action.doing}: ${(error as Error).message}`);
      }
      const overrides = await control.overrides(service, key);
      if (output.json) {
        output.document({
          registry: opened.location,
          service,
          version: key.version,
          group: key.group,
          action: action.command,
          overrides,
        });
        return;
      }
      const label = `${service} ${key.version}${key.group ? ` group ${key.group}` : ''}`;
      output.line(
        `${typeof done === 'function' ? done() : done} (${label} at ${opened.location}; consumers apply it within about a second)`,
      );
      const lines = describeOverrides(overrides);
      output.line(lines.length === 0 ? 'overrides now: none' : `overrides now: ${lines.join('; ')}`);
    } finally {
      await control.close();
    }
  } finally {
    await app.close();
  }
}

/**
 * `callisto overrides ls [service]` and `callisto overrides clear <service> [--stale]`: the runtime
 * control's override records, seen and undone. `ls` without a service reads the record of every service
 * key the registry lists and shows those that hold something; entries naming a provider that is not
 * registered any more are marked stale, and `clear --stale` removes just those.
 */
import { Command } from 'commander';
import {
  isEmptyOverrides,
  type Registry,
  type ServiceOverrides,
  staleProviders,
} from '../../registry/index.js';
import { CliError, ExitCode, unreachableError } from '../../tools/exit-codes.js';
import { openCliApp } from '../cli-app.js';
import { addControlOptions, type ControlOptions, describeOverrides, runControl } from '../control-run.js';
import { type CliIo, createOutput } from '../output.js';
import { openRegistry, registryAddressOf } from '../registry-connection.js';
import { keyLabel, listServices, readProviders } from '../registry-view.js';
import { formatTable } from '../table.js';

interface OverridesLsOptions extends Omit<ControlOptions, 'version'> {
  version?: string;
}

interface ClearOptions extends ControlOptions {
  stale?: boolean;
}

const EXAMPLES = `
Examples:
  $ callisto overrides ls --registry etcd://127.0.0.1:2379
  $ callisto overrides ls example.UserService --registry file://.callisto/registry
  $ callisto overrides clear example.UserService --stale --registry file://.callisto/registry
  $ callisto overrides clear example.UserService --registry file://.callisto/registry

ls shows what disable, enable, weight and mock wrote, per service key; an entry naming a provider that
is not registered now is marked (stale). clear removes every override of the service (consumers
apply it within about a second); with --stale, only the stale entries.`;

interface KeyOverrides {
  key: { name: string; version: string; group: string };
  overrides: ServiceOverrides;
  stale: string[];
}

async function readOverridesOf(
  registry: Registry,
  key: { name: string; version: string; group: string },
): Promise<KeyOverrides> {
  if (!registry.readOverrides) {
    throw new CliError(
      ExitCode.Failed,
      `the ${registry.kind} registry has no runtime control (no override record)`,
    );
  }
  const overrides = await registry.readOverrides(key);
  const registered = new Set((await readProviders(registry, key)).map((r) => `${r.host}:${r.port}`));
  return { key, overrides, stale: staleProviders(overrides, registered) };
}

async function runLs(io: CliIo, service: string | undefined, options: OverridesLsOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  const app = await openCliApp(options, output);
  try {
    const opened = await openRegistry(app, registryAddressOf(app), options.timeout, (m) => output.warn(m));
    const { registry, location } = opened;
    try {
      let keys: Array<{ name: string; version: string; group: string }>;
      try {
        keys =
          service === undefined
            ? (await listServices(registry, location)).map(({ name, version, group }) => ({
                name,
                version,
                group,
              }))
            : [{ name: service, version: options.version ?? '1.0.0', group: options.group ?? '' }];
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw unreachableError(`cannot read the registry ${location}: ${(error as Error).message}`);
      }
      const found: KeyOverrides[] = [];
      for (const key of keys) {
        const entry = await readOverridesOf(registry, key).catch((error: Error) => {
          if (error instanceof CliError) throw error;
          throw unreachableError(`cannot read the overrides of ${key.name} at ${location}: ${error.message}`);
        });
        if (!isEmptyOverrides(entry.overrides)) found.push(entry);
      }
      if (output.json) {
        output.document({
          registry: location,
          services: found.map(({ key, overrides, stale }) => ({ ...key, overrides, stale })),
        });
        return;
      }
      if (found.length === 0) {
        output.line(`${location}: no overrides${service === undefined ? '' : ` for ${service}`}`);
        return;
      }
      const rows = found.flatMap(({ key, overrides, stale }) =>
        describeOverrides(overrides, (provider) =>
          stale.includes(provider) ? output.style('yellow', ' (stale)') : '',
        ).map((line) => [keyLabel(key), line]),
      );
      output.line(location);
      for (const line of formatTable(
        ['SERVICE', 'OVERRIDE'].map((h) => output.style('bold', h)),
        rows,
      ))
        output.line(line);
    } finally {
      await registry.close();
    }
  } finally {
    await app.close();
  }
}

export function overridesCommand(io: CliIo): Command {
  const command = new Command('overrides').description(
    "list and clear the runtime control's overrides (disable, weight, mock)",
  );
  command.addHelpText('after', EXAMPLES);
  const ls = new Command('ls')
    .description('list the overrides in force, per service key')
    .argument('[service]', 'only this service, e.g. example.UserService');
  addControlOptions(ls);
  // without a service, every version: --version only narrows a named service
  const version = ls.options.find((option) => option.long === '--version');
  if (version !== undefined) version.defaultValue = undefined;
  ls.action((service: string | undefined, options: OverridesLsOptions) => runLs(io, service, options));

  const clear = new Command('clear')
    .description(
      'remove every override of a service (or, with --stale, those naming providers that are gone)',
    )
    .argument('<service>', 'a service name, e.g. example.UserService')
    .option('--stale', 'only entries naming providers not registered now');
  addControlOptions(clear).action((service: string, options: ClearOptions) => {
    let removed: string[] = [];
    return runControl(io, service, options, {
      command: 'overrides clear',
      doing: 'clear the overrides',
      change: async (control, key) => {
        if (options.stale) removed = await control.removeStale(service, key);
        else await control.clear(service, key);
      },
      done: () =>
        !options.stale
          ? `cleared the overrides of ${service}`
          : removed.length > 0
            ? `removed the stale overrides of ${removed.join(', ')}`
            : 'no override named a provider that is gone',
    });
  });
  return command.addCommand(ls).addCommand(clear);
}

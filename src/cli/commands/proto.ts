/**
 * `callisto proto export <service> --module <file>`: writes the `.proto` of a service definition
 * (`exportProto`, docs/schemas.md) for other languages to generate gRPC clients from. The definition
 * comes from the application's own module: every export of it that is a service definition (from
 * `defineService`) is a candidate, the one named `<service>` (and `--version`, `--group`) is written.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { exportProto, type ServiceDefinition } from '../../index.js';
import { CliError, ExitCode, usageError } from '../../tools/exit-codes.js';
import { similarNames } from '../../tools/similar-names.js';
import { collect } from '../options.js';
import type { CliIo } from '../output.js';

const EXAMPLES = `
Examples:
  $ callisto proto export example.UserService --module ./dist/services.js
  $ callisto proto export example.UserService --module ./dist/services.js --out users.proto
  $ npx tsx node_modules/.bin/callisto proto export shop.v1.Orders --module ./src/orders.ts

The module is imported as the app would import it (a .ts module needs a loader such as tsx); every
export made by defineService is a candidate. The file says the package and service gRPC clients call:
/<package>.<Service>/<method>. A service needs protobuf messages (defineService(name, { protobuf }))
or argument and result schemas (methods: { m: { args, returns } }); otherwise exit 1, saying what to
declare.`;

interface ProtoExportOptions {
  module: string[];
  out?: string;
  version?: string;
  group?: string;
}

function isDefinition(value: unknown): value is ServiceDefinition<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<ServiceDefinition<unknown>>;
  return (
    typeof candidate.name === 'string' &&
    typeof candidate.version === 'string' &&
    typeof candidate.group === 'string' &&
    Array.isArray(candidate.errors)
  );
}

async function definitionsIn(specifier: string): Promise<ServiceDefinition<unknown>[]> {
  const target =
    specifier.startsWith('.') || path.isAbsolute(specifier)
      ? pathToFileURL(path.resolve(specifier)).href
      : specifier;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    throw usageError(`cannot import --module ${specifier}: ${(error as Error).message}`);
  }
  return Object.values(loaded).filter(isDefinition);
}

export function protoCommand(io: CliIo): Command {
  const exportCommand = new Command('export')
    .description('write the .proto of a service, for gRPC clients in other languages')
    .argument('<service>', 'the service name, e.g. example.UserService')
    .requiredOption('--module <file>', "a module exporting the service's definition (repeatable)", collect)
    .option('--out <file>', 'write the .proto to this file (default: stdout)')
    .option('--version <version>', 'the service version, when the modules define several')
    .option('--group <group>', 'the service group, when the modules define several')
    .addHelpText('after', EXAMPLES)
    .action(async (service: string, options: ProtoExportOptions) => {
      const all = (await Promise.all(options.module.map(definitionsIn))).flat();
      const named = all.filter(
        (definition) =>
          definition.name === service &&
          (options.version === undefined || definition.version === options.version) &&
          (options.group === undefined || definition.group === options.group),
      );
      const unique = [...new Set(named)];
      if (unique.length === 0) {
        const names = [...new Set(all.map((definition) => definition.name))].sort();
        const near = similarNames(service, names)[0];
        throw new CliError(
          ExitCode.Failed,
          `no service ${service}${options.version ? ` ${options.version}` : ''} is defined in ${options.module.join(', ')}${near === undefined ? '' : ` (did you mean ${near}?)`}; it defines ${names.join(', ') || 'none'}`,
        );
      }
      if (unique.length > 1) {
        throw usageError(
          `${service} is defined more than once (${unique.map((d) => `${d.version}${d.group ? `/${d.group}` : ''}`).join(', ')}): name one with --version (and --group)`,
        );
      }
      let text: string;
      try {
        text = exportProto(unique[0]!);
      } catch (error) {
        throw new CliError(ExitCode.Failed, (error as Error).message);
      }
      if (options.out === undefined) io.stdout.write(text);
      else writeFileSync(options.out, text);
    });
  return new Command('proto')
    .description('Protocol Buffers: write the .proto of a service (export)')
    .addHelpText('after', EXAMPLES)
    .addCommand(exportCommand);
}

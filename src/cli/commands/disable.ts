/** `callisto disable <service> [--provider host:port]`: consumers stop routing to it (runtime control). */
import { Command } from 'commander';
import { addControlOptions, type ControlOptions, providerAddress, runControl } from '../control-run.js';
import type { CliIo } from '../output.js';

interface DisableOptions extends ControlOptions {
  provider?: string;
}

const EXAMPLES = `
Examples:
  $ callisto disable example.UserService --provider 10.0.0.5:20880 --registry etcd://127.0.0.1:2379
  $ callisto disable example.UserService --version 2.0.0 --registry file://.callisto/registry

Written to the registry's override record of the service (docs/governance.md): every consumer stops
routing new calls there within about a second (calls in flight finish), also consumers started later,
until \`callisto enable\`. A provider must be registered now (see \`callisto ls <service>\`).`;

export function disableCommand(io: CliIo): Command {
  const command = new Command('disable')
    .description('stop consumers routing to a service, or to one of its providers')
    .argument('<service>', 'a service name, e.g. example.UserService')
    .option('--provider <host:port>', 'only this provider (default: the whole service)', providerAddress);
  return addControlOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((service: string, options: DisableOptions) =>
      runControl(io, service, options, {
        command: 'disable',
        doing: 'disable',
        change: (control, key) =>
          control.disable(service, {
            ...key,
            ...(options.provider === undefined ? {} : { provider: options.provider }),
          }),
        done:
          options.provider === undefined ? `disabled ${service}` : `disabled provider ${options.provider}`,
      }),
    );
}

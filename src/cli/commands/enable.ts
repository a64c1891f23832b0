/** `callisto enable <service> [--provider host:port]`: undoes `callisto disable` (runtime control). */
import { Command } from 'commander';
import { addControlOptions, type ControlOptions, providerAddress, runControl } from '../control-run.js';
import type { CliIo } from '../output.js';

interface EnableOptions extends ControlOptions {
  provider?: string;
}

const EXAMPLES = `
Examples:
  $ callisto enable example.UserService --provider 10.0.0.5:20880 --registry etcd://127.0.0.1:2379
  $ callisto enable example.UserService --registry file://.callisto/registry

Removes the service's (or the provider's) disabled mark from the registry's override record; consumers
route to it again within about a second. Any provider address is accepted, registered or not.`;

export function enableCommand(io: CliIo): Command {
  const command = new Command('enable')
    .description('let consumers route to a disabled service or provider again')
    .argument('<service>', 'a service name, e.g. example.UserService')
    .option('--provider <host:port>', 'only this provider (default: the whole service)', providerAddress);
  return addControlOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((service: string, options: EnableOptions) =>
      runControl(io, service, options, {
        command: 'enable',
        doing: 'enable',
        change: (control, key) =>
          control.enable(service, {
            ...key,
            ...(options.provider === undefined ? {} : { provider: options.provider }),
          }),
        done: options.provider === undefined ? `enabled ${service}` : `enabled provider ${options.provider}`,
      }),
    );
}

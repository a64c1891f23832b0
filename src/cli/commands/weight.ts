/** `callisto weight <service> --provider host:port <n>`: overrides a provider's weight (runtime control). */
import { Command } from 'commander';
import { MAX_PROVIDER_WEIGHT } from '../../registry/index.js';
import { addControlOptions, type ControlOptions, providerAddress, runControl } from '../control-run.js';
import { integerIn } from '../options.js';
import type { CliIo } from '../output.js';

interface WeightOptions extends ControlOptions {
  provider: string;
}

const EXAMPLES = `
Examples:
  $ callisto weight example.UserService --provider 10.0.0.5:20880 50 --registry etcd://127.0.0.1:2379
  $ callisto weight example.UserService --provider 10.0.0.6:20880 0 --registry file://.callisto/registry

Replaces the weight of the provider's record in every consumer (within about a second) until changed
again; 0 means "only when no other provider is up". The provider must be registered now.`;

export function weightCommand(io: CliIo): Command {
  const command = new Command('weight')
    .description("override a provider's load-balancing weight")
    .argument('<service>', 'a service name, e.g. example.UserService')
    .argument('<weight>', `an integer from 0 to ${MAX_PROVIDER_WEIGHT}`, integerIn(0, MAX_PROVIDER_WEIGHT))
    .requiredOption('--provider <host:port>', 'the provider', providerAddress);
  return addControlOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((service: string, weight: number, options: WeightOptions) =>
      runControl(io, service, options, {
        command: 'weight',
        doing: 'set the weight',
        change: (control, key) => control.setWeight(service, options.provider, weight, key),
        done: `weight of ${options.provider} set to ${weight}`,
      }),
    );
}

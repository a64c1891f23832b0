/** `callisto mock <service>.<method> force|fail|off`: switches a method's mock (runtime control). */
import { Command, InvalidArgumentError } from 'commander';
import { usageError } from '../../tools/exit-codes.js';
import { addControlOptions, type ControlOptions, runControl } from '../control-run.js';
import type { CliIo } from '../output.js';

const EXAMPLES = `
Examples:
  $ callisto mock example.UserService.getUser force --registry etcd://127.0.0.1:2379
  $ callisto mock example.UserService.getUser fail --registry file://.callisto/registry
  $ callisto mock example.UserService.getUser off --registry file://.callisto/registry

force: every consumer answers the method from its mock (the reference's mockImpl, else the method's
declared mock) without calling a provider; refused (exit 1) unless the consumers have a mock for it.
fail: it calls, and answers a failed call (not a business error) from the mock; off: back to normal.
Applied within about a second.`;

function mockMode(text: string): 'force' | 'fail' | 'off' {
  if (text === 'force' || text === 'fail' || text === 'off') return text;
  throw new InvalidArgumentError('expected force, fail or off');
}

export function mockCommand(io: CliIo): Command {
  const command = new Command('mock')
    .description("switch a method's mock in every consumer: force, fail or off")
    .argument('<service.method>', 'e.g. example.UserService.getUser')
    .argument('<mode>', 'force, fail or off', mockMode);
  return addControlOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((target: string, mode: 'force' | 'fail' | 'off', options: ControlOptions) => {
      const dot = target.lastIndexOf('.');
      if (dot <= 0 || dot === target.length - 1) {
        throw usageError(`expected <service>.<method>, e.g. example.UserService.getUser, not "${target}"`);
      }
      const service = target.slice(0, dot);
      const method = target.slice(dot + 1);
      return runControl(io, service, options, {
        command: 'mock',
        doing: 'switch the mock',
        change: (control, key) => control.setMock(service, method, mode, key),
        done: `mock of ${method} ${mode === 'off' ? 'switched off' : `set to ${mode}`}`,
      });
    });
}

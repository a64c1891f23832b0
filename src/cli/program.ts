/** The `callisto` program: the commands of commands/index.ts under one parser (commander). */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { COMMANDS } from './commands/index.js';
import type { CliIo } from './output.js';

/** The package's version (package.json is two levels up from both src/cli and dist/cli). */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

const ROOT_HELP = `
Examples:
  $ callisto ls --registry etcd://127.0.0.1:2379
  $ callisto call example.UserService.getUser 7 --registry file://.callisto/registry
  $ callisto bench example.UserService.getUser 7 --url 127.0.0.1:20880 --concurrency 16 --calls 10000
  $ callisto config explain
  $ callisto doctor --registry zookeeper://127.0.0.1:2181

Exit codes:
  0  done (doctor: nothing wrong)
  1  the call failed (remote error, timeout, unknown service or method); bench: some calls failed;
     doctor: something is wrong; ls: nothing registered under that name
  2  usage or configuration mistake (unknown option, malformed JSON argument, bad address or value)
  3  the registry or the provider cannot be reached
  130  interrupted (Ctrl-C)

Colours only on a terminal; NO_COLOR=1 turns them off. Every command takes --help.`;

/** Gives `command` and every command under it the parent's settings (output, error handling). */
function inherit(command: Command, parent: Command): void {
  command.copyInheritedSettings(parent);
  for (const sub of command.commands) inherit(sub, command);
}

export function createProgram(io: CliIo): Command {
  const program = new Command('callisto')
    .description('Operate Callisto services from the command line: list, call, benchmark, explain, check.')
    .version(packageVersion(), '-V, --version', 'print the version of callisto')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // one line: `error: unknown option '--regisry' (Did you mean --registry?); see --help`
      outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')}; see --help\n`),
    })
    .addHelpText('after', ROOT_HELP);
  for (const make of COMMANDS) {
    const command = make(io);
    program.addCommand(command);
    inherit(command, program);
  }
  return program;
}

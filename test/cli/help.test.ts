/** `--help` on every command, with examples; `--version`; unknown commands. The built binary. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type CliBuild, expectOneLineError, REPO, runCli, show } from './support/cli.js';

let cli: CliBuild;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);

afterAll(() => cli?.close());

const COMMANDS = [
  [],
  ['ls'],
  ['call'],
  ['bench'],
  ['bench', 'compare'],
  ['config'],
  ['config', 'explain'],
  ['doctor'],
  ['gateway'],
  ['disable'],
  ['enable'],
  ['weight'],
  ['mock'],
  ['proto'],
  ['proto', 'export'],
];

describe('callisto --help', () => {
  it('every command has --help with examples', async () => {
    for (const command of COMMANDS) {
      const result = await runCli(cli, [...command, '--help']);
      expect(result.code, show(result)).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout, command.join(' ')).toMatch(
        new RegExp(`^Usage: callisto${command.map((c) => ` ${c}`).join('')} `),
      );
      expect(result.stdout, command.join(' ')).toMatch(
        new RegExp(`\\nExamples:\\n {2}\\$ callisto ${command[0] ?? ''}`),
      );
    }
    const help = await runCli(cli, ['help', 'call']);
    expect(help.stdout).toMatch(/^Usage: callisto call /);
  });

  it('the top-level help lists the commands and the exit codes', async () => {
    const result = await runCli(cli, ['--help']);
    for (const command of [
      'ls',
      'call',
      'bench',
      'config',
      'doctor',
      'disable',
      'enable',
      'weight',
      'mock',
      'proto',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`\\n {2}${command} `));
    }
    expect(result.stdout).toMatch(
      /Exit codes:\n {2}0 {2}done.*\n {2}1 {2}the call failed[\s\S]*\n {2}2 {2}usage or configuration mistake.*\n {2}3 {2}the registry or the provider cannot be reached/,
    );
  });

  it('--version prints the package version', async () => {
    const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string })
      .version;
    const result = await runCli(cli, ['--version']);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it('an unknown command or no command: one line or the help, exit 2', async () => {
    expectOneLineError(
      await runCli(cli, ['lst']),
      2,
      /^error: unknown command 'lst' \(Did you mean ls\?\); see --help$/,
    );
    const none = await runCli(cli, []);
    expect(none.code, show(none)).toBe(2);
    expect(none.stderr).toMatch(/^Usage: callisto /);
  });
});

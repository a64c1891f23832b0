/**
 * The command line on a terminal: run under `script` (util-linux), which gives the binary a
 * pseudo-terminal, as a person's shell would. Colours there, and not with NO_COLOR or through a pipe
 * (the other files check that no escape codes reach a pipe); `--json` stays plain; bench draws its
 * progress bar there (and nowhere else).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  type CliBuild,
  cleanEnv,
  hasAnsi,
  type ProviderProcess,
  startProvider,
} from './support/cli.js';

let cli: CliBuild;
let provider: ProviderProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-tty-'));
  [cli, provider] = await Promise.all([buildCli(), startProvider({ registry: `file://${dir}` })]);
}, 120_000);

afterAll(async () => {
  await provider?.stop();
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** Runs `callisto <args>` on a pseudo-terminal; what the terminal showed (stdout and stderr) and the exit code. */
function onTerminal(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, cli.main, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: cli.cwd,
      env: cleanEnv({ TERM: 'xterm-256color', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

const registry = () => `file://${dir}`;
const BOLD = '\u001b[1m';
const RED = '\u001b[31m';

describe('on a terminal', () => {
  it('colours tables and errors; NO_COLOR turns that off', async () => {
    const coloured = await onTerminal(['ls', '--registry', registry()]);
    expect(coloured.code, coloured.screen).toBe(0);
    expect(coloured.screen).toContain(`${BOLD}SERVICE`);
    const error = await onTerminal(['ls', 'cli.Nope', '--registry', registry()]);
    expect(error.code, error.screen).toBe(1);
    expect(error.screen).toContain(`${RED}error:`);

    for (const env of [{ NO_COLOR: '1' }, { TERM: 'dumb' }] as Array<Record<string, string>>) {
      const plain = await onTerminal(['ls', '--registry', registry()], env);
      expect(plain.code, plain.screen).toBe(0);
      expect(plain.screen).toContain('SERVICE');
      expect(hasAnsi(plain.screen), JSON.stringify(plain.screen)).toBe(false);
      const plainError = await onTerminal(['ls', 'cli.Nope', '--registry', registry()], env);
      expect(hasAnsi(plainError.screen), JSON.stringify(plainError.screen)).toBe(false);
    }
  });

  it('keeps --json plain', async () => {
    const result = await onTerminal(['ls', '--registry', registry(), '--json']);
    expect(result.code, result.screen).toBe(0);
    expect(hasAnsi(result.screen)).toBe(false);
    expect(JSON.parse(result.screen)).toMatchObject({ services: [{ name: 'cli.UserService' }] });
  });

  it('bench draws a live progress bar, then the report', async () => {
    const result = await onTerminal(
      [
        'bench',
        'cli.UserService.getUser',
        '1',
        '--url',
        provider.address,
        '--duration',
        '1.5',
        '--concurrency',
        '2',
      ],
      { NO_COLOR: '1' },
    );
    expect(result.code, result.screen).toBe(0);
    const frames =
      result.screen.match(/bench \S* \d+% \| \d+ calls \| \d+ calls\/s \| 0 failed \| \d+\.\d s/g) ?? [];
    expect(frames.length, result.screen).toBeGreaterThan(1); // redrawn while it runs
    expect(result.screen).toMatch(/bench cli\.UserService\.getUser \(1\.0\.0\) via url /);
    expect(result.screen).toMatch(/calls ok, 0 failed in/);
  });
});

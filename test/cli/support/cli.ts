/**
 * The command line as a user runs it: the BUILT binary (`dist/cli/main.js` compiled from this tree) in
 * a child process, with a clean environment and a working directory of its own, its stdout, stderr and
 * exit code captured. The package is built once per test run (`buildCli()` waits for the run's shared
 * build, test/support/shared-build.ts), into the repository's `dist/` as `npm run build` does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { sharedBuild } from '../../support/shared-build.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PROVIDER = fileURLToPath(new URL('../fixtures/provider.ts', import.meta.url));

export interface CliBuild {
  /** The binary: `<build>/dist/cli/main.js`. */
  readonly main: string;
  /** A working directory of its own (no configuration file in it unless a test writes one). */
  readonly cwd: string;
  close(): void;
}

/** The run's build of this tree (test/support/shared-build.ts) and a working directory of its own. */
export async function buildCli(): Promise<CliBuild> {
  const { cliMain } = await sharedBuild();
  const cwd = mkdtempSync(path.join(tmpdir(), 'callisto-cli-cwd-'));
  return {
    main: cliMain,
    cwd,
    close() {
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

/** Our environment minus what npm, vitest or Callisto would read from it. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      /^npm_/i.test(key) ||
      key.startsWith('CALLISTO_') ||
      key.startsWith('VITEST')
    ) {
      continue;
    }
    if (key === 'NO_COLOR' || key === 'FORCE_COLOR' || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  // a terminal type as a person's shell has: only a pipe (not TERM) keeps the colours off
  return { ...env, TERM: 'xterm-256color', ...extra };
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** How long the process ran, ms. */
  readonly ms: number;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Killed after this long (the test then fails on its exit code). Default 60 s. */
  timeoutMs?: number;
}

/** Runs `callisto <args>` to its end. */
export function runCli(build: CliBuild, args: string[], options: RunOptions = {}): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [build.main, ...args], {
      cwd: options.cwd ?? build.cwd,
      env: cleanEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether `text` carries ANSI escape sequences (colours, cursor movement). */
export function hasAnsi(text: string): boolean {
  return text.includes('\u001b[');
}

/** The result as text for assertion messages. */
export function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
}

/**
 * A user mistake or a failure, as the command line must tell it: exit `code`, stderr exactly one line
 * `error: …` matching `pattern`, no stack trace, nothing on stdout.
 */
export function expectOneLineError(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.code, show(result)).toBe(code);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, show(result)).toHaveLength(1);
  expect(lines[0], show(result)).toMatch(/^error: /);
  expect(lines[0], show(result)).toMatch(pattern);
  expect(result.stderr, show(result)).not.toMatch(/\n\s+at /);
  expect(result.stdout, show(result)).toBe('');
}

/** The one JSON document a `--json` run prints on stdout. */
export function jsonOf(result: CliResult): Record<string, unknown> {
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines, show(result)).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

export interface ProviderOptions {
  registry?: string;
  version?: string;
  group?: string;
  application?: string;
  weight?: number;
}

export interface ProviderProcess {
  /** `host:port` it serves on. */
  readonly address: string;
  readonly pid: number;
  /** Graceful stop (SIGTERM); resolves with the number of calls it served. */
  stop(): Promise<number>;
  /** SIGKILL: its registry entries stay until their TTL. */
  kill(): Promise<void>;
}

/** Starts test/cli/fixtures/provider.ts (cli.UserService) and waits until it serves and is registered. */
export function startProvider(options: ProviderOptions = {}): Promise<ProviderProcess> {
  return startProviderScript(PROVIDER, options);
}

/**
 * Starts a provider fixture script (given its options as JSON; it prints `serving <address> pid <pid>`
 * once registered, and `calls <n>` when it stops) and waits until it serves.
 */
export async function startProviderScript(script: string, options: object): Promise<ProviderProcess> {
  // stdin is its lifeline: it stops when this process goes (a failed beforeAll cannot leak it)
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(options)], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const serving = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the provider did not start within 30 s:\n${output}`));
    }, 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving (\S+) pid (\d+)\n/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the provider exited (${code ?? signal}) before serving:\n${output}`));
    });
  });
  return {
    address: serving[1]!,
    pid: Number(serving[2]),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      const calls = /calls (\d+)\n/.exec(output);
      if (!calls) throw new Error(`the provider did not report its calls:\n${output}`);
      return Number(calls[1]);
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

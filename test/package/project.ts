/**
 * Helpers for the package test: pack this repository the way `npm pack` does, make a fresh project
 * outside it, install the tarball there, and run processes in it. npm gets a clean environment (no
 * `npm_*` variables inherited from an enclosing `npm test`, no `CALLISTO_*` ones), and dependencies
 * come from the local npm cache when they are there (`--prefer-offline`).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { sharedBuild } from '../support/shared-build.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TSC = path.join(REPO, 'node_modules/typescript/bin/tsc');

const run = promisify(execFile);

/** The environment child processes get: ours, minus what npm or Callisto would read from it. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^npm_/i.test(key) && !key.startsWith('CALLISTO_') && key !== 'INIT_CWD',
    ),
  );
}

export async function npm(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: cleanEnv(), timeout: 120_000 });
  return stdout;
}

/** `npx --no -- <args>` in `dir`: a command the project has installed (never fetched); its stdout. */
export async function npx(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run('npx', ['--no', '--', ...args], { cwd, env: cleanEnv(), timeout: 60_000 });
    return stdout;
  } catch (error) {
    const { stdout, stderr, code } = error as { stdout?: string; stderr?: string; code?: unknown };
    throw new Error(
      `npx ${args.join(' ')} failed (${String(code)}) in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`,
    );
  }
}

export interface Packed {
  tarball: string;
  files: string[];
}

/**
 * `npm pack` of this repository, made once per test run (test/support/shared-build.ts: `npm run build`,
 * then the pack). `destination` is kept for the callers' sake: the tarball stays in the run's directory.
 */
export async function pack(_destination: string): Promise<Packed> {
  const { tarball, files } = await sharedBuild();
  return { tarball, files: [...files] };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Installs the tarball (or any npm package spec, such as a git URL) into `dir`, with `extra` packages in the same install (dependencies from the npm cache when there). */
export async function installTarball(dir: string, tarball: string, extra: string[] = []): Promise<void> {
  await npm(dir, [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    tarball,
    ...extra,
  ]);
}

/** `tsc --init` in `dir`, then `skipLibCheck` turned off: the defaults a new TypeScript project gets. */
export async function tscInit(dir: string): Promise<void> {
  await run(process.execPath, [TSC, '--init'], { cwd: dir, env: cleanEnv() });
  const file = path.join(dir, 'tsconfig.json');
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes('"skipLibCheck": true')) throw new Error(`tsc --init wrote no skipLibCheck: ${text}`);
  fs.writeFileSync(file, text.replace('"skipLibCheck": true', '"skipLibCheck": false'));
}

/** Runs tsc on the project in `dir`; resolves with its output, rejects with it when tsc fails. */
export async function tsc(dir: string, args: string[] = []): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [TSC, '-p', dir, ...args], { cwd: dir, env: cleanEnv() });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc failed in ${dir}:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Runs `node <file>` in `dir` to its end; rejects (with the output) on a non-zero exit. */
export async function node(dir: string, file: string, args: string[] = []): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [file, ...args], {
      cwd: dir,
      env: cleanEnv(),
      timeout: 60_000,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr, code } = error as { stdout?: string; stderr?: string; code?: unknown };
    throw new Error(`node ${file} failed (${String(code)}) in ${dir}:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

export interface Background {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** Resolves with the output once `pattern` appears in stdout; rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<string>;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `node <file> ...args` in `dir` (with `env` added to the clean environment) and keeps it running. */
export function startNode(
  dir: string,
  file: string,
  options: { args?: string[]; env?: Record<string, string> } = {},
): Background {
  const child = spawn(process.execPath, [file, ...(options.args ?? [])], {
    cwd: dir,
    env: { ...cleanEnv(), ...options.env },
    stdio: 'pipe',
  });
  let stdout = '';
  let all = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    all += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    all += chunk.toString();
  });
  return {
    child,
    output: () => all,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(stdout)) {
            child.stdout.off('data', check);
            resolve(stdout);
          }
        };
        child.stdout.on('data', check);
        check();
        void exited.then((code) => reject(new Error(`${file} exited (${code}) before ${pattern}:\n${all}`)));
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The README's code blocks by file name: a fenced `ts` or `js` block whose first line is
 * `// <name>` (anything after the name is a comment).
 */
export function readmeFiles(): Map<string, string> {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const files = new Map<string, string>();
  for (const match of readme.matchAll(/```(?:ts|js)\n(\/\/ (\S+)[^\n]*\n[\s\S]*?)```/g)) {
    const name = match[2]!;
    if (files.has(name)) throw new Error(`README has two blocks named ${name}`);
    files.set(name, match[1]!);
  }
  return files;
}

/** Writes the README blocks `names` into `dir`. */
export function writeReadmeFiles(dir: string, names: string[]): void {
  const files = readmeFiles();
  for (const name of names) {
    const code = files.get(name);
    if (code === undefined) throw new Error(`README has no block starting with // ${name}`);
    fs.writeFileSync(path.join(dir, name), code);
  }
}

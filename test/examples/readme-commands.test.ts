/**
 * Every command line of the README runs as written, or is named below with the test that runs it
 * instead (or why it cannot run inside the suite). The lines are cut from README.md's `sh` blocks; a
 * `# …` line right after a command is its expected output (`…` stands for anything). Against a real
 * provider of the README's example.UserService (RPC, the HTTP entry, registered on a file registry
 * and on etcd), with the addresses the README writes replaced by the ones this run listens on, and
 * `npx callisto` by this checkout's command line (src/cli/main.ts through tsx).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallistoApp, defineService } from '../../src/index.js';
import { closedPort } from '../cli/support/cli.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { closeAll, testApp } from '../support/apps.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/** README lines that this test does not run, each with where it is run instead or why not here. */
const RUN_ELSEWHERE: ReadonlyArray<[RegExp, string]> = [
  [/^npm ci && npm run demo$/, 'test/examples/demo.test.ts runs the demo'],
  [/^npm ci && npm test$/, 'the suite itself (.ci/run runs exactly this)'],
  [
    /^npm install \/path\/to\/callisto-0\.1\.0\.tgz$/,
    'test/package/install.test.ts installs the packed tarball',
  ],
  [/^npm install git\+https:/, 'test/package/install.test.ts installs from git (the committed HEAD)'],
  [/^npm install etcd3$/, 'test/package/install.test.ts installs beside an optional client'],
  [/^npx tsc$/, 'test/package/install.test.ts compiles and runs the quick start'],
  [/^node (provider|consumer)\.js$/, 'test/package/install.test.ts runs the quick start'],
  [
    /^(SCALE_SIZES=\S+ )?npm run test:scale$/,
    'minutes of load per engine: run apart (vitest.scale.config.ts)',
  ],
  [/^(BENCH_\w+=\S+ )?npm run bench$/, 'minutes of load: the benchmark is not part of the suite'],
  [
    /^BENCH_PROFILE=\S+ npm run bench && npm run bench:profile-summary -- \S+$/,
    'minutes of load: the benchmark is not part of the suite',
  ],
  [/^npx callisto bench compare /, 'needs two saved runs: test/cli/bench.test.ts compares two'],
];

interface Command {
  line: number;
  text: string;
  /** The `# {…}` line after it: what it prints. */
  expected?: string;
  /** The `# 404 …` line after a curl line: the HTTP status it answers. */
  status?: number;
}

/** The README's `sh` blocks, as lists of commands (continuation lines joined). */
function readmeBlocks(): Command[][] {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const blocks: Command[][] = [];
  for (const match of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const first = readme.slice(0, match.index).split('\n').length + 1;
    const commands: Command[] = [];
    const lines = match[1]!.split('\n');
    for (let i = 0; i < lines.length; i++) {
      let text = lines[i]!;
      const line = first + i;
      if (text.trim() === '') continue;
      if (text.startsWith('#')) {
        const last = commands.at(-1);
        const note = /^#\s*(?:(\d{3})\b\s*)?(.*)$/.exec(text)!;
        if (last === undefined || last.expected !== undefined || last.status !== undefined) continue;
        if (note[1] !== undefined) last.status = Number(note[1]);
        if (/^[[{"]/.test(note[2]!)) last.expected = note[2]!;
        continue;
      }
      while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1)}${lines[++i]!.trim()}`;
      commands.push({ line, text: text.replace(/\s+#\s.*$/, '').trim() });
    }
    blocks.push(commands);
  }
  return blocks;
}

interface User {
  id: number;
  name: string;
  joinedAt: Date;
}
interface UserService {
  getUser(id: number): Promise<User>;
  rename(id: number, name: string): Promise<void>;
}
/** The README's contract. */
const UserServiceDef = defineService<UserService>('example.UserService', {
  version: '1.0.0',
  methods: { getUser: { idempotent: true }, rename: { timeoutMs: 1000 } },
});

let cwd: string;
let provider: CallistoApp;
let etcd: string;
const renamed: string[] = [];
const background: ChildProcess[] = [];

beforeAll(async () => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-readme-'));
  etcd = sharedServerAddress('etcd');
  provider = await testApp({
    application: 'users',
    registry: [`file://${path.join(cwd, '.callisto/registry')}`, `etcd://${etcd}`],
    server: { http: { port: 0 } },
  });
  provider.provide(UserServiceDef, {
    async getUser(id) {
      return { id, name: `user-${id}`, joinedAt: new Date('2024-05-01T12:00:00Z') };
    },
    rename(id, name) {
      renamed.push(`${id}:${name}`);
    },
  });
  await provider.start();
}, 30_000);

afterAll(async () => {
  for (const child of background) child.kill('SIGKILL');
  await closeAll();
  fs.rmSync(cwd, { recursive: true, force: true });
});

/** The command with this run's addresses, and this checkout's CLI for `npx callisto`. */
function localized(text: string, gatewayPort: number | undefined): string {
  const tsx = pathToFileURL(path.join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;
  const cli = `${JSON.stringify(process.execPath)} --import ${tsx} ${JSON.stringify(path.join(REPO, 'src/cli/main.ts'))}`;
  return text
    .replaceAll('npx callisto', cli)
    .replaceAll('etcd://127.0.0.1:2379', `etcd://${etcd}`)
    .replaceAll('127.0.0.1:20880', provider.address!)
    .replaceAll('--port 8080', `--port ${gatewayPort ?? 0}`)
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${gatewayPort ?? provider.httpPort}`);
}

/** `…` in the README's expected output stands for anything. */
function expectedPattern(expected: string): RegExp {
  const parts = expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`);
}

/** Starts a long-running command (the gateway) and resolves once it says it listens. */
function startInBackground(text: string): Promise<void> {
  const child = spawn('bash', ['-c', text], { cwd, env: { ...process.env, NO_COLOR: '1' } });
  background.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${text} did not start:\n${output}`)), 20_000);
    const check = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${text} exited (${code}):\n${output}`));
    });
  });
}

describe('the README', () => {
  it('runs every command line as written, printing what it says (or names where it runs instead)', async () => {
    let ran = 0;
    for (const block of readmeBlocks()) {
      const gatewayPort = block.some((c) => c.text.startsWith('npx callisto gateway'))
        ? await closedPort() // free now: the gateway takes it
        : undefined;
      for (const command of block) {
        if (RUN_ELSEWHERE.some(([pattern]) => pattern.test(command.text))) continue;
        const text = localized(command.text, gatewayPort);
        const where = `README.md:${command.line}: ${command.text}`;
        if (command.text.startsWith('npx callisto gateway')) {
          await startInBackground(text);
          ran++;
          continue;
        }
        const curl = command.text.startsWith('curl ');
        const result = await run('bash', ['-c', curl ? `${text} -s -w '\\n%{http_code}'` : text], {
          cwd,
          env: { ...process.env, NO_COLOR: '1' },
          timeout: 30_000,
        }).catch((error: { code?: number; stdout?: string; stderr?: string }) => {
          throw new Error(`${where}\nexited ${error.code}:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
        });
        let stdout = result.stdout.trim();
        if (curl) {
          const status = Number(stdout.slice(stdout.lastIndexOf('\n') + 1));
          stdout = stdout.slice(0, Math.max(0, stdout.lastIndexOf('\n'))).trim();
          if (command.status === undefined) expect(status, `${where}\n${stdout}`).toBeLessThan(300);
          else expect(status, `${where}\n${stdout}`).toBe(command.status);
        }
        if (command.expected !== undefined) expect(stdout, where).toMatch(expectedPattern(command.expected));
        ran++;
      }
      for (const child of background.splice(0)) child.kill('SIGTERM');
    }
    expect(ran).toBeGreaterThanOrEqual(12);
    expect(renamed).toContain('7:Ann');
  }, 180_000);

  it('names no skipped line that the README no longer has', () => {
    const commands = readmeBlocks().flat();
    for (const [pattern, reason] of RUN_ELSEWHERE) {
      expect(
        commands.some((command) => pattern.test(command.text)),
        `${pattern} (${reason})`,
      ).toBe(true);
    }
  });
});

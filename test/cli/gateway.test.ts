/**
 * `callisto gateway`: the built binary serves HTTP/JSON and routes to a provider process found in a
 * file registry; curl calls it; SIGTERM closes it with exit 0. Usage mistakes are one-line errors.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  type CliBuild,
  cleanEnv,
  expectOneLineError,
  type ProviderProcess,
  runCli,
  startProvider,
} from './support/cli.js';

const run = promisify(execFile);
let cli: CliBuild;
let provider: ProviderProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-gateway-cli-'));
  [cli, provider] = await Promise.all([buildCli(), startProvider({ registry: `file://${dir}` })]);
}, 90_000);

afterAll(async () => {
  await provider?.stop();
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('callisto gateway', () => {
  it('serves calls to the providers of a registry until SIGTERM', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [cli.main, 'gateway', '--registry', `file://${dir}`, '--port', '0', '--json'],
      { cwd: cli.cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const started = await new Promise<{ url: string }>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]!) as { url: string });
        });
        void exited.then((code) => reject(new Error(`gateway exited ${code}: ${stderr}`)));
      });
      const { stdout: answer } = await run('curl', [
        '-sS',
        '-X',
        'POST',
        '-H',
        'content-type: application/json',
        '-d',
        '[7]',
        `${started.url}/cli.UserService/getUser`,
      ]);
      expect(JSON.parse(answer)).toMatchObject({ id: 7, name: 'user-7' });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('says where the providers must be when no registry is given', async () => {
    const result = await runCli(cli, ['gateway', '--port', '0']);
    expectOneLineError(result, 2, /--registry/);
  });

  it('refuses a bad port', async () => {
    const result = await runCli(cli, ['gateway', '--registry', `file://${dir}`, '--port', '70000']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port/);
  });

  it('names the missing half of --tls-key / --tls-cert', async () => {
    const result = await runCli(cli, [
      'gateway',
      '--registry',
      `file://${dir}`,
      '--port',
      '0',
      '--tls-key',
      '/nowhere.key',
    ]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/createGateway\.tls\.cert/);
  });
});

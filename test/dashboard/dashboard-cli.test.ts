/**
 * `callisto dashboard` as a user runs it: the built binary (with the page's files copied next to it, as
 * `npm run build` does), serving until Ctrl-C; its mistakes as one line and exit code 2.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  type CliBuild,
  cleanEnv,
  closedPort,
  expectOneLineError,
  REPO,
  runCli,
} from '../cli/support/cli.js';
import { waitFor } from '../support/wait-for.js';
import { type ProviderProcess, startProvider, tempRegistry } from './support/dashboard-env.js';

const registry = tempRegistry();
let build: CliBuild;
let provider: ProviderProcess;

beforeAll(async () => {
  [build, provider] = await Promise.all([buildCli(), startProvider({ registry: registry.address })]);
  // what the build script does after tsc
  cpSync(
    path.join(REPO, 'src/dashboard/assets'),
    path.join(path.dirname(build.main), '../dashboard/assets'),
    {
      recursive: true,
    },
  );
}, 120_000);

afterAll(async () => {
  await provider?.kill();
  build?.close();
  registry.remove();
});

/** Starts `callisto dashboard <args>` and waits for the address it prints. */
async function serve(args: string[]): Promise<{ child: ChildProcess; url: string; stdout: () => string }> {
  const child = spawn(process.execPath, [build.main, 'dashboard', ...args], {
    cwd: build.cwd,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address within 30 s:\n${stdout}${stderr}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // both lines: where it listens, and what to open
      const match = /^dashboard on (\S+) .*\n.*Ctrl-C stops it\n/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}:\n${stdout}${stderr}`));
    });
  });
  return { child, url, stdout: () => stdout };
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

describe('callisto dashboard', () => {
  it('serves the page and the services, prints where, and stops on Ctrl-C with exit 0', async () => {
    const { child, url, stdout } = await serve(['--registry', registry.address, '--port', '0']);
    try {
      expect(stdout()).toContain(`(registries: ${registry.address})`);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>Callisto dashboard</title>');
      // the page polls: the registry's first read may still be on its way
      const overview = await waitFor(async () => {
        const answer = (await (await fetch(`${url}api/overview`)).json()) as {
          services: Array<{ name: string }>;
        };
        return answer.services.length > 0 ? answer : undefined;
      }, 20_000);
      expect(overview.services.map((s) => s.name)).toEqual(['shop.Inventory']);
      child.kill('SIGINT');
      expect(await exitOf(child)).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('prints the address with the token, and the API wants it', async () => {
    const { child, url, stdout } = await serve([
      '--registry',
      registry.address,
      '--port',
      '0',
      '--token',
      'tok-12345678',
    ]);
    try {
      expect(stdout()).toContain(`open ${url}#token=tok-12345678 in a browser`);
      expect((await fetch(`${url}api/overview`)).status).toBe(401);
      const ok = await fetch(`${url}api/overview`, { headers: { authorization: 'Bearer tok-12345678' } });
      expect(ok.status).toBe(200);
    } finally {
      child.kill('SIGKILL');
      await exitOf(child);
    }
  });

  it('starts with an unreachable registry and says so on the page', async () => {
    const port = await closedPort();
    const { child, url } = await serve(['--registry', `etcd://127.0.0.1:${port}`, '--port', '0']);
    try {
      const overview = await waitFor(async () => {
        const answer = (await (await fetch(`${url}api/overview`)).json()) as {
          registries: Array<{ status: string; error?: string }>;
        };
        return answer.registries[0]?.error ? answer : undefined;
      }, 20_000);
      expect(overview.registries).toEqual([
        expect.objectContaining({
          status: 'disconnected',
          error: expect.stringMatching(/ECONNREFUSED|unavailable|connect/i),
        }),
      ]);
    } finally {
      child.kill('SIGKILL');
      await exitOf(child);
    }
  });

  it('says what is wrong with its options in one line, exit 2', async () => {
    expectOneLineError(
      await runCli(build, ['dashboard', '--port', '0']),
      2,
      /which registries\? give --registry/,
    );
    expectOneLineError(
      await runCli(build, ['dashboard', '--registry', registry.address, '--token', 'short']),
      2,
      /invalid --token .*at least 8 characters/,
    );
    expectOneLineError(
      await runCli(build, ['dashboard', '--registry', registry.address, '--port', 'x']),
      2,
      /--port/,
    );
    expectOneLineError(await runCli(build, ['dashboard', '--registry', 'nosuch://x']), 2, /nosuch/);
    // beyond loopback: actions need TLS and a token, viewing a token (or client certificates)
    expectOneLineError(
      await runCli(build, ['dashboard', '--registry', registry.address, '--host', '0.0.0.0', '--port', '0']),
      2,
      /invalid --host = "0\.0\.0\.0": .*give --tls-cert and --tls-key, and --token/,
    );
    expectOneLineError(
      await runCli(build, ['dashboard', '--registry', registry.address, '--host', '0.0.0.0', '--read-only']),
      2,
      /invalid --host = "0\.0\.0\.0": .*--token.*--tls-ca/,
    );
    expectOneLineError(
      await runCli(build, ['dashboard', '--registry', registry.address, '--tls-cert', '/nonexistent.pem']),
      2,
      /invalid --tls-key = "": /,
    );
  });
});

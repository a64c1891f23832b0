/**
 * A tool given a registry on its command line does not read the working directory's configuration:
 * `callisto ls`, `gateway` or `dashboard` started in a provider's directory are not stopped by that
 * provider's `server.auth` secret. `--config` (or CALLISTO_CONFIG) still reads one. In process, through
 * the same runCli as the binary.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/** A provider's configuration whose secret is still a placeholder (`${…}` unset): refused when read. */
const PROVIDER_CONFIG = `application: orders
server:
  auth:
    tokens:
      web: short
    defaultAccess: allow
`;

let dir: string;
let before: string;

beforeEach(() => {
  before = process.cwd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-cli-config-'));
  fs.writeFileSync(path.join(dir, 'callisto.config.yaml'), PROVIDER_CONFIG);
  fs.mkdirSync(path.join(dir, 'registry'));
  process.chdir(dir);
});

afterEach(() => {
  process.chdir(before);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string; stdout: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await runCli(args, { stdout, stderr, env: { NO_COLOR: '1', ...env } });
  return { code, stdout: out, stderr: err };
}

describe('the configuration file of the directory a tool starts in', () => {
  it('is not read when --registry names the registry', async () => {
    const registry = `file://${path.join(dir, 'registry')}`;
    const listed = await cli(['ls', '--registry', registry]);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
  });

  it('is read when --config names it, or CALLISTO_CONFIG does, and its mistake is reported', async () => {
    const registry = `file://${path.join(dir, 'registry')}`;
    const named = await cli(['ls', '--registry', registry, '--config', 'callisto.config.yaml']);
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/server\.auth\.tokens/);
    const fromEnv = await cli(['ls', '--registry', registry], { CALLISTO_CONFIG: 'callisto.config.yaml' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/server\.auth\.tokens/);
  });

  it('is read when the command line names no registry (the configuration says where it is)', async () => {
    const listed = await cli(['ls']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toMatch(/server\.auth\.tokens/);
  });
});

/**
 * What an app does not use, it does not load (docs/performance.md, "Memory"): a provider with the
 * defaults and no registry, run from the built package, loads no registry driver, no JWT library, no
 * YAML parser and not the HTTP entry (off by default). Each of these is imported where it is first
 * needed; putting one back among the static imports turns this red.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO, sharedBuild } from '../support/shared-build.js';

const run = promisify(execFile);
const FIXTURES = path.join(REPO, 'test/fixtures/lazy-modules');

/** Runs the fixture app with the load recorder: what it printed, and every module it loaded. */
async function loadedBy(): Promise<{ stdout: string; loaded: string[] }> {
  await sharedBuild();
  const { stdout, stderr } = await run(
    process.execPath,
    [
      '--import',
      path.join(FIXTURES, 'record-loads.mjs'),
      path.join(FIXTURES, 'provider-app.mjs'),
      path.join(REPO, 'dist/index.js'),
    ],
    { cwd: REPO, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const loaded = stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
  return { stdout, loaded };
}

const NOT_LOADED: Record<string, RegExp> = {
  'the etcd driver': /dist\/registry\/etcd-registry\.js$/,
  'the ZooKeeper driver': /dist\/registry\/zookeeper-registry\.js$/,
  'the Redis driver': /dist\/registry\/redis-registry\.js$/,
  'the file registry': /dist\/registry\/file-registry\.js$/,
  'jose (JWT)': /node_modules\/jose\//,
  'yaml (configuration files)': /node_modules\/yaml\//,
  'the HTTP entry': /dist\/provider\/http\//,
};

describe('modules an app does not use', () => {
  it('a provider with the defaults serves a call without loading registry drivers, jose, yaml or the HTTP entry', async () => {
    const { stdout, loaded } = await loadedBy();
    expect(stdout).toBe('hello lazy\n');
    // the recorder sees the modules that are loaded: the core and the gRPC entry (on by default) are
    expect(loaded.some((url) => /dist\/provider\/provider\.js$/.test(url))).toBe(true);
    expect(loaded.some((url) => /dist\/provider\/grpc\/grpc-entry\.js$/.test(url))).toBe(true);
    expect(loaded.some((url) => /node_modules\/prom-client\//.test(url))).toBe(true);
    const found = Object.entries(NOT_LOADED)
      .filter(([, pattern]) => loaded.some((url) => pattern.test(url)))
      .map(([name]) => name);
    expect(found).toEqual([]);
  }, 120_000);
});

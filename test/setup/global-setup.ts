/**
 * Vitest global setup: starts one etcd, one ZooKeeper and one Redis for the whole run (in parallel, on
 * free ports, in temporary directories) and hands their `host:port` to the test files through
 * `project.provide` (read them with `sharedServerAddress()` from test/setup/shared-servers.ts). A server
 * whose binary is missing is provided as '' and the suites that need it fail with an install hint.
 * Everything is stopped afterwards, also when the run fails. Suites that stop or restart a server start
 * their own private instance with test/setup/servers.ts.
 *
 * `CALLISTO_TEST_SERVERS=etcd,redis` limits which servers start (`none` starts none).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { isServerInstalled, SERVER_KINDS, type ServerKind, startServer, type TestServer } from './servers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port` of the shared etcd, or '' when it is not available. */
    etcdAddress: string;
    /** `host:port` of the shared ZooKeeper, or '' when it is not available. */
    zookeeperAddress: string;
    /** `host:port` of the shared Redis, or '' when it is not available. */
    redisAddress: string;
    /** A directory of this run's own (test/support/shared-build.ts builds and packs the package there once). */
    suiteDir: string;
  }
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function wanted(): ServerKind[] {
  const selection = process.env['CALLISTO_TEST_SERVERS'];
  if (selection === undefined || selection === '' || selection === 'all') return [...SERVER_KINDS];
  const names = selection.split(',').map((name) => name.trim());
  return SERVER_KINDS.filter((kind) => names.includes(kind));
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const servers: TestServer[] = [];
  fs.mkdirSync(path.join(REPO, '.tmp'), { recursive: true });
  const suiteDir = fs.mkdtempSync(path.join(REPO, '.tmp', 'suite-'));
  project.provide('suiteDir', suiteDir);
  const teardown = async (): Promise<void> => {
    await Promise.allSettled(servers.map((server) => server.close()));
    fs.rmSync(suiteDir, { recursive: true, force: true });
  };
  const kinds = wanted().filter((kind) => {
    if (isServerInstalled(kind)) return true;
    console.warn(
      `[global-setup] ${kind} is not installed; its suites will fail (run scripts/services/install.sh)`,
    );
    return false;
  });
  const started = await Promise.allSettled(kinds.map((kind) => startServer(kind)));
  const errors: unknown[] = [];
  for (const result of started) {
    if (result.status === 'fulfilled') servers.push(result.value);
    else errors.push(result.reason);
  }
  if (errors.length > 0) {
    await teardown();
    throw new AggregateError(
      errors,
      `registry test servers failed to start: ${errors.map(String).join('; ')}`,
    );
  }
  const addressOf = (kind: ServerKind): string => servers.find((s) => s.kind === kind)?.address ?? '';
  project.provide('etcdAddress', addressOf('etcd'));
  project.provide('zookeeperAddress', addressOf('zookeeper'));
  project.provide('redisAddress', addressOf('redis'));
  return teardown;
}

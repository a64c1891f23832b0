/**
 * Being told at once that a registry does not answer, on etcd, Redis and ZooKeeper: a provider's
 * `start()` logs it at the first failed attempt and fails after `startTimeoutMs` with an error naming the
 * registry, the reason and the setting; it keeps retrying meanwhile, so a server that comes up in time
 * lets it start. A consumer's first discovery logs it just as early.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callisto, RpcError } from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { freePort, type ServerKind, startServer } from '../setup/servers.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { escapeRegExp, logLines } from './fixtures/log-lines.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await closeAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const START_TIMEOUT_MS = 1_500;

describe('startTimeoutMs', () => {
  it('is checked at callisto() and may come from CALLISTO_START_TIMEOUT_MS', async () => {
    await expect(
      callisto({ startTimeoutMs: 0, load: { configFile: false, env: false } }),
    ).rejects.toMatchObject({
      name: 'ConfigError',
      key: 'startTimeoutMs',
    });
    const app = await testApp({ load: { env: { CALLISTO_START_TIMEOUT_MS: '12345' } } });
    expect(app.config.startTimeoutMs).toBe(12_345);
  });
});

describe.each(['etcd', 'redis', 'zookeeper'] as ServerKind[])(
  'a registry that does not answer: %s',
  (kind) => {
    it('start() logs it at once and fails after startTimeoutMs, naming the registry and why', async () => {
      const address = `${kind}://127.0.0.1:${await freePort()}`;
      const log = logLines();
      const app = await testApp({
        registry: address,
        startTimeoutMs: START_TIMEOUT_MS,
        logger: log.logger,
        logLevel: 'info',
      });
      app.provide(FlakyDef, new FlakyImpl('p'));
      const startedAt = Date.now();
      const error = await app.start().then(
        () => undefined,
        (failure: unknown) => RpcError.from(failure),
      );
      const failedAt = Date.now();

      expect(error?.code).toBe('Network');
      expect(error?.message).toMatch(
        new RegExp(
          `registry ${escapeRegExp(address)} \\(disconnected: .*ECONNREFUSED.*\\) did not take it within startTimeoutMs = ${START_TIMEOUT_MS} ms`,
        ),
      );
      expect(failedAt - startedAt).toBeGreaterThanOrEqual(START_TIMEOUT_MS);
      const told = log.matching(
        new RegExp(`^registry ${escapeRegExp(address)}: cannot reach the server: .*ECONNREFUSED`),
      );
      expect(told).toHaveLength(1); // once, not per retry
      expect(told[0]!.level).toBe('warn');
      expect(told[0]!.at - startedAt).toBeLessThan(START_TIMEOUT_MS); // before the error, not with it
      expect(app.state).toBe('closed');
    });

    it('start() keeps retrying meanwhile: a server that comes up in time lets it start', async () => {
      const server = await startServer(kind);
      cleanups.push(() => server.close());
      await server.stop();
      const log = logLines();
      const app = await testApp({
        registry: server.url,
        startTimeoutMs: 60_000,
        logger: log.logger,
        logLevel: 'info',
      });
      app.provide(FlakyDef, new FlakyImpl('p'));
      const started = app.start();
      await waitFor(() => log.matching(/cannot reach the server/).length === 1, 10_000);
      await server.restart();
      await started;
      expect(app.state).toBe('running');
      const consumer = await testApp({ registry: server.url, consumer: { snapshotDir: '' } });
      expect(await consumer.refer(FlakyDef).read('k')).toBe('p:k');
    });

    it('a first discovery logs it at once and names it in the NoProvider error after startTimeoutMs', async () => {
      const address = `${kind}://127.0.0.1:${await freePort()}`;
      const log = logLines();
      const consumer = await testApp({
        registry: address,
        startTimeoutMs: START_TIMEOUT_MS,
        logger: log.logger,
        logLevel: 'info',
        consumer: { snapshotDir: '' },
      });
      const calledAt = Date.now();
      const error = await consumer
        .refer(FlakyDef)
        .read('k')
        .then(
          () => undefined,
          (failure: unknown) => RpcError.from(failure),
        );

      expect(error?.code).toBe('NoProvider');
      expect(error?.message).toContain(`${address} (disconnected: `);
      expect(error?.message).toContain('no registry has delivered a list yet');
      const first = log.problems()[0]!;
      expect(first.message).toMatch(
        new RegExp(`^registry ${escapeRegExp(address)}: cannot reach the server`),
      );
      expect(first.at - calledAt).toBeLessThan(START_TIMEOUT_MS);
      expect(
        log.matching(/no provider list after 1000 ms from .* \(disconnected: .*\); still trying/),
      ).toHaveLength(1);
      expect(log.matching(/no registry answered in 1500 ms .* and there is no snapshot/)).toHaveLength(1);
    });
  },
);

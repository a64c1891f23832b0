/**
 * Issue 9: "Idle connections are never closed with the defaults: heartbeat pongs refresh the idle
 * clock." With the defaults a heartbeat (30 s) comes far more often than the idle timeout (600 s), so
 * these tests keep that relation, scaled down: heartbeats every 100 ms, idle timeout 1 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const Echo = defineService<{ echo(n: number): Promise<number> }>('test.IdleEcho', { methods: { echo: {} } });

async function pair() {
  const provider = await testApp({ heartbeatIntervalMs: 100 });
  provider.provide(Echo, { echo: (n) => n });
  await provider.start();
  const consumer = await testApp({ heartbeatIntervalMs: 100, consumer: { idleTimeoutMs: 1_000 } });
  const echo = consumer.refer(Echo, { url: provider.address! });
  const server = appInternals(provider).provider.server!;
  return { echo, server, pool: appInternals(consumer).consumer.pool };
}

describe('idle connections, heartbeat interval shorter than the idle timeout', () => {
  it('closes a connection with no call for idleTimeoutMs although heartbeats keep flowing on it', async () => {
    const { echo, server, pool } = await pair();
    expect(await echo.echo(1)).toBe(1);
    const [connection] = pool.connections();
    const lastCall = Date.now();
    await waitFor(() => server.connectionCount === 0, 8_000, { message: 'idle connection never closed' });
    expect(Date.now() - lastCall).toBeGreaterThanOrEqual(1_000);
    // frames (heartbeats) arrived well after the last call: they did not count as use
    expect(connection!.lastActivity).toBeGreaterThan(lastCall + 300);
    expect(await echo.echo(2)).toBe(2); // and it reopens on demand
    expect(server.connectionCount).toBe(1);
  });

  it('keeps a connection that carries calls', async () => {
    const { echo, server, pool } = await pair();
    expect(await echo.echo(0)).toBe(0);
    const [connection] = pool.connections();
    const until = Date.now() + 2_500;
    for (let n = 1; Date.now() < until; n++) {
      expect(await echo.echo(n)).toBe(n);
      await new Promise((resolve) => setTimeout(resolve, 100)); // the workload: a call every 100 ms
    }
    expect(pool.connections()).toEqual([connection]);
    expect(server.connectionCount).toBe(1);
  });
});

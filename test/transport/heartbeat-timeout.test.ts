/**
 * Issue 23: `heartbeatTimeoutMs` replaces the fixed limit of three silent heartbeat intervals. A peer
 * that stops answering (a real socket that reads and never writes) is given up after the configured
 * timeout, on the provider and on the consumer; a timeout under two intervals is a ConfigError.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { callisto, defineService, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

const INTERVAL_MS = 100;
const TIMEOUT_MS = 800;

const Echo = defineService<{ echo(n: number): Promise<number> }>('test.HeartbeatEcho', {
  methods: { echo: {} },
});

const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeAll();
});

/** Resolves when `socket` closes, or rejects after `boundMs`. */
function closed(socket: net.Socket, boundMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not closed within ${boundMs} ms`)), boundMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('heartbeatTimeoutMs', () => {
  it('a provider gives up a silent consumer connection after the configured timeout, not three intervals', async () => {
    const provider = await testApp({ heartbeatIntervalMs: INTERVAL_MS, heartbeatTimeoutMs: TIMEOUT_MS });
    provider.provide(Echo, { echo: (n) => n });
    await provider.start();
    const [host, port] = provider.address!.split(':');
    const silent = net.connect({ host: host!, port: Number(port) });
    cleanups.push(() => silent.destroy());
    let pings = 0;
    silent.on('data', () => {
      pings++; // pinged, never answered
    });
    await new Promise<void>((resolve) => silent.once('connect', resolve));
    const started = Date.now();
    await closed(silent, 5_000);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    // checked once per interval: given up at the first check at or after the timeout (loose for CI)
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_500);
    expect(pings).toBeGreaterThan(0);
  });

  it('a consumer gives up a provider that stopped answering after the configured timeout', async () => {
    const server = net.createServer((socket) => {
      socket.resume(); // reads everything, answers nothing
      cleanups.push(() => socket.destroy());
    });
    cleanups.push(() => server.close());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const consumer = await testApp({
      heartbeatIntervalMs: INTERVAL_MS,
      heartbeatTimeoutMs: TIMEOUT_MS,
      consumer: { suspectAfterMs: 0, timeoutMs: 10_000, retries: 0 },
    });
    const echo = consumer.refer(Echo, { url: `127.0.0.1:${port}` });
    const started = Date.now();
    const error = await echo.echo(1).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe('Network');
    expect((error as RpcError).message).toMatch(/presumed dead/);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('refuses a timeout under two heartbeat intervals with a ConfigError naming the key', async () => {
    const attempt = callisto({
      logLevel: 'silent',
      load: { configFile: false, env: false },
      heartbeatIntervalMs: 1_000,
      heartbeatTimeoutMs: 1_500,
    });
    await expect(attempt).rejects.toThrow(
      /heartbeatTimeoutMs = 1500.*at least 2 × heartbeatIntervalMs = 2000/,
    );
  });
});

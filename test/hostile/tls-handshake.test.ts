/**
 * Hostile input against a TLS provider process, before any handshake completes: connections count
 * against server.maxConnectionsPerAddress and server.maxConnections from the moment they arrive (the
 * excess closed at once, before a handshake is even tried), a connection that does not finish its
 * handshake within server.tls.handshakeTimeoutMs is closed, and failed handshakes make a bounded
 * number of log lines. A well-behaved TLS consumer is served throughout.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { connectMany, destroyRawPeers } from './support/raw-peer.js';
import { killTargets, startProviderTarget, type Target } from './support/targets.js';
import { startWellBehaved, type WellBehaved } from './support/well-behaved.js';

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  destroyRawPeers();
  await closeAll();
  await killTargets();
});

const HANDSHAKE_TIMEOUT_MS = 2_000;

async function tlsTarget(server: Record<string, unknown> = {}): Promise<{ target: Target; plain: string }> {
  const target = await startProviderTarget({
    server: {
      tls: { key: pki.server.key, cert: pki.server.cert, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS },
      ...server,
    },
  });
  return { target, plain: target.address.replace(/^tls:\/\//, '') };
}

const goodClient = (target: Target): Promise<WellBehaved> =>
  startWellBehaved(target.address, { consumer: { tls: { ca: pki.ca } } });

async function expectServedThroughout(good: WellBehaved, target: Target): Promise<void> {
  await good.served();
  const stats = await good.stop();
  expect(stats, JSON.stringify(stats)).toMatchObject({ failed: 0, wrong: 0 });
  expect(stats.ok).toBeGreaterThan(0);
  expect(target.exited).toBe(false);
}

describe('hostile: TLS connections that never finish their handshake', () => {
  it('counts them against server.maxConnectionsPerAddress from accept, and closes the rest at the handshake timeout', async () => {
    const { target, plain } = await tlsTarget({ maxConnectionsPerAddress: 20 });
    const good = await goodClient(target);
    const openedAt = performance.now();
    const peers = await connectMany(plain, 60, ['127.0.0.2']);
    const closed = () => peers.filter((peer) => peer.closed).length;
    // the 40 over the cap: closed as they arrive, long before any handshake could time out
    await waitFor(() => closed() >= 40, HANDSHAKE_TIMEOUT_MS - 1_000).catch(() => undefined);
    expect(closed()).toBe(40);
    expect(performance.now() - openedAt).toBeLessThan(HANDSHAKE_TIMEOUT_MS);
    expect(target.logs().some((line) => line.includes('maxConnectionsPerAddress'))).toBe(true);
    // the 20 within it: closed once their handshake is overdue
    await waitFor(() => closed() === 60, HANDSHAKE_TIMEOUT_MS + 5_000).catch(() => undefined);
    expect(closed()).toBe(60);
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(HANDSHAKE_TIMEOUT_MS - 100);
    await expectServedThroughout(good, target);
  });

  it('counts them against server.maxConnections in all', async () => {
    const { target, plain } = await tlsTarget({ maxConnections: 30 });
    const good = await goodClient(target); // connection 1 of 30
    const peers = await connectMany(plain, 40, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const closed = () => peers.filter((peer) => peer.closed).length;
    await waitFor(() => closed() >= 11, HANDSHAKE_TIMEOUT_MS - 1_000).catch(() => undefined);
    expect(closed()).toBe(11);
    await expectServedThroughout(good, target);
  });

  it('the HTTPS entry too: counted from accept, closed at the handshake timeout', async () => {
    const { target } = await tlsTarget({ maxConnectionsPerAddress: 20, http: { port: 0 } });
    const httpPort = Number(await target.ask('http', 'HTTP'));
    const good = await goodClient(target);
    const openedAt = performance.now();
    const peers = await connectMany(`127.0.0.1:${httpPort}`, 30, ['127.0.0.2']);
    const closed = () => peers.filter((peer) => peer.closed).length;
    await waitFor(() => closed() >= 10, HANDSHAKE_TIMEOUT_MS - 1_000).catch(() => undefined);
    expect(closed()).toBe(10);
    expect(performance.now() - openedAt).toBeLessThan(HANDSHAKE_TIMEOUT_MS);
    await waitFor(() => closed() === 30, HANDSHAKE_TIMEOUT_MS + 5_000).catch(() => undefined);
    expect(closed()).toBe(30);
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(HANDSHAKE_TIMEOUT_MS - 100);
    await expectServedThroughout(good, target);
  });

  it('logs failed handshakes rate-limited: 200 plaintext clients make at most a few lines', async () => {
    const { target, plain } = await tlsTarget();
    const good = await goodClient(target);
    const peers = await connectMany(plain, 200, ['127.0.0.2', '127.0.0.3']);
    await Promise.all(peers.map((peer) => peer.write(Buffer.from('GET / HTTP/1.1\r\nhost: x\r\n\r\n'))));
    await Promise.all(peers.map((peer) => peer.whenClosed));
    const failures = () => target.logs().filter((line) => line.includes('TLS handshake from'));
    await waitFor(() => failures().length >= 1, 5_000);
    await target.ask('holding', 'HOLDING'); // the target has written what it logged by now
    expect(failures().length).toBeGreaterThanOrEqual(1);
    expect(failures().length).toBeLessThanOrEqual(2);
    expect(failures()[0]).toMatch(/plaintext client on a TLS port/);
    await expectServedThroughout(good, target);
  });
});

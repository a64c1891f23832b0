/**
 * Hostile input, class 3 and 4, against a provider process: many connections, ping floods, and one
 * client taking every execution slot. Connections beyond server.maxConnectionsPerAddress or
 * server.maxConnections are closed as they arrive; pongs are not queued without bound for a peer that
 * does not read; one connection (or one remote address) holds at most its share of the slots.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/rpc-error.js';
import { PONG_QUEUE_LIMIT_BYTES } from '../../src/protocol/framed-connection.js';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { expectWithinBound } from './support/bounds.js';
import { msgpack, ping, request } from './support/frames.js';
import { connectMany, connectRawPeer, destroyRawPeers, type RawPeer } from './support/raw-peer.js';
import { killTargets, MiB, startProviderTarget, type Target } from './support/targets.js';
import { startWellBehaved, type WellBehaved } from './support/well-behaved.js';

afterEach(async () => {
  destroyRawPeers();
  await closeAll();
  await killTargets();
});

async function expectServedThroughout(good: WellBehaved, target: Target): Promise<void> {
  await good.served();
  const stats = await good.stop();
  expect(stats, JSON.stringify(stats)).toMatchObject({ failed: 0, wrong: 0 });
  expect(stats.ok).toBeGreaterThan(0);
  expect(stats.slowestMs).toBeLessThan(3_000);
  expect(target.exited).toBe(false);
}

function loggedAbout(target: Target, ...parts: string[]): boolean {
  return target.logs().some((line) => parts.every((part) => line.includes(part)));
}

const holdBody = Buffer.from(msgpack.encode([60_000]));

/** `count` hold(60000) requests with ids from `firstId`, in one write. */
function holds(count: number, firstId = 1): Buffer {
  return Buffer.concat(Array.from({ length: count }, (_, i) => request(firstId + i, 'hold', holdBody)));
}

async function holding(target: Target): Promise<number> {
  return Number(await target.ask('holding', 'HOLDING'));
}

describe('hostile: connections on a provider', () => {
  it('closes connections beyond server.maxConnectionsPerAddress as they arrive', async () => {
    const target = await startProviderTarget({ server: { maxConnectionsPerAddress: 20 } });
    const good = await startWellBehaved(target.address);
    const peers = await connectMany(target.address, 60, ['127.0.0.2']);
    const closed = () => peers.filter((peer) => peer.closed).length;
    await waitFor(() => closed() >= 40, 5_000).catch(() => undefined);
    expect(closed()).toBe(40);
    expect(loggedAbout(target, '127.0.0.2', 'maxConnectionsPerAddress')).toBe(true);
    await expectServedThroughout(good, target);
    expect(closed()).toBe(40); // the 20 within the cap stay open
  });

  it('closes connections beyond server.maxConnections, keeping those already open', async () => {
    const target = await startProviderTarget({ server: { maxConnections: 30 } });
    const good = await startWellBehaved(target.address); // connection 1 of 30
    const peers = await connectMany(target.address, 40, ['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    const closed = () => peers.filter((peer) => peer.closed).length;
    await waitFor(() => closed() >= 11, 5_000).catch(() => undefined);
    expect(closed()).toBe(11);
    expect(loggedAbout(target, 'server.maxConnections')).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('does not queue pongs without bound for a peer that floods pings and never reads', async () => {
    // Reading is paused only past 1 GiB of unread answers here: the pong bound alone must hold.
    const target = await startProviderTarget({ server: { writeHighWaterBytes: 1024 * MiB } });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    peer.stopReading();
    const before = await target.resetPeak();
    const burst = Buffer.concat(Array.from({ length: 50_000 }, () => ping(7)));
    let sent = 0;
    for (let i = 0; i < 100; i++) {
      await peer.write(burst); // 5,000,000 pings, 100 MB
      sent += burst.length;
    }
    await good.served();
    const after = await target.peak();
    expectWithinBound({
      name: 'ping flood (provider)',
      before,
      after,
      sentBytes: sent,
      allowedBytes: PONG_QUEUE_LIMIT_BYTES,
      perByteSent: 0,
    });
    await expectServedThroughout(good, target);
  });
});

describe('hostile: fair share of a provider', () => {
  it('gives one connection at most server.connectionShare of the execution slots', async () => {
    // addressShare 1: only the connection's share limits it here
    const target = await startProviderTarget({ server: { maxConcurrentCalls: 20, addressShare: 1 } });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    await peer.write(holds(100));
    await waitFor(() => peer.answers.size >= 90, 10_000).catch(() => undefined);
    expect(await holding(target)).toBe(10);
    expect([...peer.answers.values()].every((answer) => answer.status === ErrorCode.Overloaded)).toBe(true);
    await expectServedThroughout(good, target);
    await target.ask('release', 'RELEASED');
  });

  it('gives the connections of one remote address together at most server.addressShare', async () => {
    const target = await startProviderTarget({
      server: { maxConcurrentCalls: 20, connectionShare: 0.5, addressShare: 0.5 },
    });
    const good = await startWellBehaved(target.address);
    const peers: RawPeer[] = await Promise.all([1, 2, 3].map(() => connectRawPeer(target.address)));
    for (const peer of peers) await peer.write(holds(100));
    const answered = () => peers.reduce((sum, peer) => sum + peer.answers.size, 0);
    await waitFor(() => answered() >= 290, 10_000).catch(() => undefined);
    expect(await holding(target)).toBe(10);
    await expectServedThroughout(good, target);
    await target.ask('release', 'RELEASED');
  });
});

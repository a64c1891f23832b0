/**
 * Hostile input, class 1 and 3, against a provider process: frames that arrive slowly or never finish.
 * Buffers grow with the bytes that arrive, not with a header's claim; partial frames of all
 * connections share one budget; a frame must complete within frameTimeoutMs; a connection that sends
 * nothing is closed after the heartbeat bound.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { expectWithinBound } from './support/bounds.js';
import { claim, FrameKind } from './support/frames.js';
import { connectMany, connectRawPeer, destroyRawPeers } from './support/raw-peer.js';
import { killTargets, MiB, startProviderTarget, type Target } from './support/targets.js';
import { startWellBehaved, type WellBehaved } from './support/well-behaved.js';

afterEach(async () => {
  destroyRawPeers();
  await closeAll();
  await killTargets();
});

const HOSTILE_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];

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

describe('hostile: partial and slow frames on a provider', () => {
  it('allocates a partial frame as its bytes arrive, never from the length its header claims', async () => {
    // The budget is out of the way here (16 GiB): only the growth rule bounds the memory.
    const target = await startProviderTarget({ maxPartialFrameBytes: 16 * 1024 * MiB });
    const good = await startWellBehaved(target.address);
    const before = await target.resetPeak();
    const peers = await connectMany(target.address, 400, HOSTILE_ADDRESSES);
    // 400 connections, each a 50-byte start of a frame that claims 8 MiB
    const start = claim(FrameKind.Request, 1, 8 * MiB - 100, 30);
    await Promise.all(peers.map((peer) => peer.write(start)));
    await good.served();
    const after = await target.peak();
    expectWithinBound({
      name: '8 MiB claims (provider)',
      before,
      after,
      sentBytes: start.length * peers.length,
      measure: 'arrayBuffers',
    });
    expect(peers.every((peer) => !peer.closed)).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('shares one budget for partial frames among all connections and closes those beyond it', async () => {
    const budget = 8 * MiB;
    const target = await startProviderTarget({
      maxPartialFrameBytes: budget,
      server: { maxConnectionsPerAddress: 1_000 },
    });
    const good = await startWellBehaved(target.address);
    const before = await target.resetPeak();
    const peers = await connectMany(target.address, 80, HOSTILE_ADDRESSES);
    // each: 1.5 MiB of a 4 MiB frame, then nothing
    const part = claim(FrameKind.Request, 1, 4 * MiB, 1.5 * MiB);
    await Promise.all(peers.map((peer) => peer.write(part)));
    const closedByProvider = () => peers.filter((peer) => peer.closed).length;
    // measured whether or not the provider closes them, so that a missing budget shows in memory
    await waitFor(() => closedByProvider() >= 70, 10_000).catch(() => undefined);
    const after = await target.peak();
    expectWithinBound({
      name: 'partial-frame budget (provider)',
      before,
      after,
      sentBytes: part.length * peers.length,
      allowedBytes: budget + peers.length * 16 * 1024,
      perByteSent: 0,
    });
    expect(closedByProvider()).toBeGreaterThanOrEqual(70);
    expect(loggedAbout(target, 'maxPartialFrameBytes')).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('closes a connection whose frame is not complete within frameTimeoutMs (a byte at a time)', async () => {
    const target = await startProviderTarget({ frameTimeoutMs: 1_000 });
    const good = await startWellBehaved(target.address);
    const peers = await Promise.all([1, 2, 3].map(() => connectRawPeer(target.address)));
    await Promise.all(peers.map((peer) => peer.write(claim(FrameKind.Request, 1, 10_000, 10))));
    const started = Date.now();
    // a byte every 100 ms: alive as far as heartbeats go, but the frame never completes in time
    const trickle = setInterval(() => {
      for (const peer of peers) void peer.write(Buffer.from([0x80]));
    }, 100);
    try {
      await waitFor(() => peers.every((peer) => peer.closed), 8_000);
    } finally {
      clearInterval(trickle);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(loggedAbout(target, '127.0.0.2', 'frameTimeoutMs')).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('closes a connection that sends nothing after the heartbeat bound (3 intervals)', async () => {
    const target = await startProviderTarget({ heartbeatIntervalMs: 300 });
    const good = await startWellBehaved(target.address);
    const silent = await connectRawPeer(target.address);
    const started = Date.now();
    await waitFor(() => silent.closed, 8_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
    expect(silent.heartbeats).toBeGreaterThan(0); // it was pinged, and never answered
    await expectServedThroughout(good, target);
  });
});

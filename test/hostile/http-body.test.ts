/**
 * Hostile input against a provider's HTTP entry: a body sent as one-byte chunks. Each chunk arrives as
 * its own 'data' event; kept as they came, a million of them cost some 70 times their bytes. Bodies are
 * copied into one growing buffer instead (src/http/http-body.ts), so what a body holds is a small
 * multiple of the bytes sent, measured here on the provider's peak RSS while the bodies are incomplete.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { expectWithinBound } from './support/bounds.js';
import { killTargets, startProviderTarget } from './support/targets.js';
import { startWellBehaved } from './support/well-behaved.js';

const sockets = new Set<net.Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await closeAll();
  await killTargets();
});

/** A raw HTTP/1.1 client from 127.0.0.2 that collects what it is answered. */
function connect(port: number): Promise<{ socket: net.Socket; received: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
    sockets.add(socket);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received: () => text }));
    socket.once('error', reject);
  });
}

function write(socket: net.Socket, bytes: Buffer | string): Promise<void> {
  return new Promise((resolve) => socket.write(bytes, () => resolve()));
}

/** `text` in chunked encoding, one byte per chunk: six bytes on the wire per byte of body. */
function oneByteChunks(text: string): Buffer {
  const out = Buffer.alloc(text.length * 6);
  for (let i = 0; i < text.length; i++) {
    out.write(`1\r\n${text[i]}\r\n`, i * 6, 'latin1');
  }
  return out;
}

describe('hostile: HTTP bodies', () => {
  it('a body sent as one-byte chunks costs a small multiple of its bytes, not one Buffer per chunk', async () => {
    const target = await startProviderTarget({ server: { http: { port: 0 } } });
    const port = Number(await target.ask('http', 'HTTP'));
    const good = await startWellBehaved(target.address);
    const value = 'x'.repeat(512 * 1024 - 8);
    const body = oneByteChunks(JSON.stringify([value]));
    const head =
      'POST /hostile.Target/echo HTTP/1.1\r\nhost: target\r\ncontent-type: application/json\r\n' +
      'transfer-encoding: chunked\r\n\r\n';
    const peers = await Promise.all([connect(port), connect(port)]);
    const before = await target.resetPeak();
    let sent = 0;
    for (const peer of peers) {
      await write(peer.socket, head);
      for (let at = 0; at < body.length; at += 64 * 1024) {
        await write(peer.socket, body.subarray(at, at + 64 * 1024));
      }
      sent += head.length + body.length;
    }
    for (const peer of peers) await write(peer.socket, '0\r\n\r\n');
    await waitFor(() => peers.every((peer) => peer.received().includes('\r\n\r\n')), 20_000);
    // VmHWM: the peak while the provider held the bodies
    const after = await target.peak();
    expectWithinBound({
      name: 'one-byte chunks (HTTP body)',
      before,
      after,
      sentBytes: sent,
      perByteSent: 4,
    });
    for (const peer of peers) expect(peer.received()).toMatch(/^HTTP\/1\.1 200/);
    await good.served();
    const stats = await good.stop();
    expect(stats).toMatchObject({ failed: 0, wrong: 0 });
  });
});

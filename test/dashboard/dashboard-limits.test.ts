/**
 * The dashboard's listener bounds, as every HTTP listener of Callisto has them (src/http/): connections
 * capped per remote address and in all, a connection that sends no headers closed once
 * `headersTimeoutMs` passes (checked every quarter of it, not node's 30 s), and a body that does not
 * arrive within `bodyTimeoutMs` refused with 408. No browser: raw sockets.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { type RunningDashboard, startDashboard, tempRegistry } from './support/dashboard-env.js';

const TOKEN = 'limits-token-2026';
const registry = tempRegistry();
let dashboard: RunningDashboard;
let port: number;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  dashboard = await startDashboard({
    registries: [registry.address],
    token: TOKEN,
    maxConnectionsPerAddress: 4,
    headersTimeoutMs: 200,
    bodyTimeoutMs: 200,
  });
  port = Number(new URL(dashboard.url).port);
}, 60_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await dashboard?.close();
  registry.remove();
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    sockets.push(socket);
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

/** Everything the dashboard sends on `socket` until it closes it. */
function received(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.once('close', () => resolve(text));
  });
}

describe('the dashboard listener', () => {
  it('closes a connection over maxConnectionsPerAddress as it arrives, and takes one again when a place is free', async () => {
    const held = await Promise.all([connect(), connect(), connect(), connect()]);
    const over = await connect();
    // closed by the dashboard without an answer
    expect(await received(over)).toBe('');
    for (const socket of held) socket.destroy();
    await waitFor(async () => {
      const socket = await connect();
      const answer = received(socket);
      socket.write(
        `GET /api/session HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\nconnection: close\r\n\r\n`,
      );
      return (await answer).startsWith('HTTP/1.1 200');
    });
  });

  it('closes a connection that sends no headers within headersTimeoutMs', async () => {
    const idle = await connect();
    const started = performance.now();
    await received(idle);
    // 200 ms and a check every 50 ms (node's default check, every 30 s, kept it for up to 30 s)
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('answers 408 to a body that does not arrive within bodyTimeoutMs, and closes the connection', async () => {
    const socket = await connect();
    const answer = received(socket);
    socket.write(
      `POST /api/call HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"serv`,
    );
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(text).toContain('dashboard.bodyTimeoutMs');
  });
});

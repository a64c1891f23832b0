/**
 * Ports for test servers that must come back on the same port after a restart.
 *
 * A port the kernel hands out for `listen(0)` lies in its ephemeral range, the same range it draws the
 * local port of every outgoing connection from. While a test server is down for a restart, any of the
 * thousands of connections the parallel suites open can be given that port as its local end (or a
 * client reconnecting to the server can connect to itself), and the server's restart then fails with
 * EADDRINUSE. So ports here come from below the ephemeral range, where the kernel never assigns one by
 * itself, and each vitest worker draws from a block of its own so two workers never pick the same port.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const HOST = '127.0.0.1';
const LOWEST = 10_000;
const BLOCKS = 32;

let next = -1;

/** A port below the kernel's ephemeral range that nobody listens on right now (bound and released). */
export async function freePort(): Promise<number> {
  const block = portBlock();
  if (!block) return kernelPort();
  const size = block.end - block.start;
  if (next < 0) next = Math.floor(Math.random() * size);
  for (let tried = 0; tried < size; tried++) {
    const port = block.start + (next++ % size);
    if (await bindable(port)) return port;
  }
  return kernelPort();
}

function portBlock(): { start: number; end: number } | undefined {
  const ephemeralStart = ephemeralRangeStart();
  const span = Math.floor((ephemeralStart - LOWEST) / BLOCKS);
  if (span < 64) return undefined;
  const worker = Number(process.env['VITEST_POOL_ID'] ?? 0) % BLOCKS;
  const start = LOWEST + worker * span;
  return { start, end: start + span };
}

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const start = Number(low);
    return Number.isInteger(start) && start > 0 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: HOST, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The `memory` transport's streams behave as the connection code expects a socket to: bytes arrive in
 * order on a later turn, in chunks of at most 64 KiB; a side that pauses makes the other side's queue
 * grow (write returns false past 16 KiB, `drain` once delivered); `end` closes both sides after what
 * is queued; `destroy` closes both at once; a port nobody listens on refuses (ECONNREFUSED).
 */
import { describe, expect, it } from 'vitest';
import {
  createMemoryNetwork,
  createMemoryTransport,
  MEMORY_CLIENT_HOST,
} from '../../src/transport/memory.js';
import type { ByteStream } from '../../src/transport/transport.js';
import { waitFor } from '../support/wait-for.js';

interface Side {
  stream: ByteStream;
  received: Buffer[];
  closed: boolean;
  errors: Error[];
}

function watch(stream: ByteStream): Side {
  const side: Side = { stream, received: [], closed: false, errors: [] };
  stream.on('data', (chunk) => side.received.push(Buffer.from(chunk)));
  stream.on('close', () => {
    side.closed = true;
  });
  stream.on('error', (error) => side.errors.push(error));
  return side;
}

async function pair(): Promise<{ client: Side; server: Side }> {
  const network = createMemoryNetwork();
  const transport = createMemoryTransport(network);
  let server: Side | undefined;
  const listener = await transport.listen({ host: 'h', port: 0 }, (stream) => {
    server = watch(stream);
  });
  const client = watch(transport.connect({ host: 'h', port: listener.port }));
  await new Promise<void>((resolve) => client.stream.once('connect', resolve));
  return { client, server: server! };
}

const bytes = (side: Side): Buffer => Buffer.concat(side.received);

describe('memory transport streams', () => {
  it('delivers bytes in order, on a later turn, in chunks of at most 64 KiB', async () => {
    const { client, server } = await pair();
    expect(server.stream.remoteAddress).toBe(MEMORY_CLIENT_HOST);
    client.stream.write(Buffer.from('ab'));
    client.stream.write(Buffer.from('cd'));
    expect(server.received).toEqual([]); // nothing synchronously
    await waitFor(() => bytes(server).length === 4);
    expect(bytes(server).toString()).toBe('abcd');
    const big = Buffer.alloc(200 * 1024, 7);
    client.stream.write(big);
    await waitFor(() => bytes(server).length === 4 + big.length);
    expect(server.received.every((chunk) => chunk.length <= 64 * 1024)).toBe(true);
    expect(bytes(server).subarray(4).equals(big)).toBe(true);
  });

  it('queues writes while the reader is paused: write returns false past 16 KiB, drain after it reads', async () => {
    const { client, server } = await pair();
    server.stream.pause();
    let drained = 0;
    client.stream.on('drain', () => drained++);
    expect(client.stream.write(Buffer.alloc(8 * 1024))).toBe(true);
    expect(client.stream.write(Buffer.alloc(8 * 1024))).toBe(false);
    expect(client.stream.write(Buffer.alloc(100 * 1024))).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(server.received).toEqual([]); // paused: nothing delivered
    expect(client.stream.writableLength).toBe(116 * 1024);
    server.stream.resume();
    await waitFor(() => bytes(server).length === 116 * 1024);
    expect(client.stream.writableLength).toBe(0);
    await waitFor(() => drained === 1);
  });

  it('ends both sides once what is queued is delivered', async () => {
    const { client, server } = await pair();
    client.stream.write(Buffer.from('last words'));
    client.stream.end();
    expect(client.stream.writableEnded).toBe(true);
    expect(client.stream.write(Buffer.from('more'))).toBe(false);
    await waitFor(() => client.closed && server.closed);
    expect(bytes(server).toString()).toBe('last words');
    expect(server.stream.writableEnded).toBe(true); // no half-open connections
  });

  it('destroys both sides at once, dropping what is queued', async () => {
    const { client, server } = await pair();
    server.stream.pause();
    client.stream.write(Buffer.from('dropped'));
    client.stream.destroy();
    await waitFor(() => client.closed && server.closed);
    expect(server.received).toEqual([]);
    expect(client.stream.destroyed && server.stream.destroyed).toBe(true);
  });

  it('refuses a connection to a port nobody listens on, and a listen on a taken one', async () => {
    const network = createMemoryNetwork();
    const transport = createMemoryTransport(network);
    const refused = watch(transport.connect({ host: 'h', port: 9 }));
    await waitFor(() => refused.closed);
    expect(refused.errors[0]).toMatchObject({ code: 'ECONNREFUSED' });
    const listener = await transport.listen({ host: 'h', port: 9 }, () => {});
    await expect(transport.listen({ host: 'h', port: 9 }, () => {})).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
    await listener.close();
    expect(network.listeners).toBe(0);
    // another network does not see this one's listeners
    const other = createMemoryTransport(createMemoryNetwork());
    await transport.listen({ host: 'h', port: 10 }, () => {});
    const elsewhere = watch(other.connect({ host: 'h', port: 10 }));
    await waitFor(() => elsewhere.closed);
    expect(elsewhere.errors[0]).toMatchObject({ code: 'ECONNREFUSED' });
  });
});

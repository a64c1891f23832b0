import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { defineService, type RpcError } from '../../src/index.js';
import { FrameKind } from '../../src/protocol/frame.js';
import { closeAll, testApp } from '../support/apps.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const Blob = defineService<{ put(data: string): Promise<number>; hang(): Promise<void> }>('test.Blob', {
  methods: { put: {}, hang: {} },
});

describe('limits and backpressure', () => {
  it('answers Overloaded beyond maxConcurrentCalls instead of queueing', async () => {
    const release: Array<() => void> = [];
    // one consumer connection: the shares (default 0.5) are tested in test/hostile/fair-share.test.ts
    const provider = await testApp({
      server: { maxConcurrentCalls: 2, connectionShare: 1, addressShare: 1 },
    });
    provider.provide(Blob, {
      put: (data) => data.length,
      hang: () => new Promise<void>((resolve) => release.push(resolve)),
    });
    await provider.start();
    const consumer = await testApp();
    const blob = consumer.refer(Blob, { url: provider.address!, cluster: 'failfast' });
    const hanging = [blob.hang(), blob.hang()];
    await waitFor(() => release.length === 2);
    await expect(blob.put('x')).rejects.toMatchObject({ code: 'Overloaded', remote: true });
    for (const resume of release) resume();
    await Promise.all(hanging);
    expect(await blob.put('xyz')).toBe(3);
  });

  it('rejects calls as Overloaded once too many bytes wait for a peer that does not read', async () => {
    // A "provider" that accepts connections and never reads: the consumer's queue must stay bounded.
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.pause();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const consumer = await testApp({ consumer: { maxQueuedBytes: 1024 * 1024 } });
      const blob = consumer.refer(Blob, { url: `127.0.0.1:${port}`, cluster: 'failfast', timeoutMs: 60_000 });
      const payload = 'x'.repeat(256 * 1024);
      const outcomes: Array<Promise<unknown>> = [];
      let overloaded: RpcError | undefined;
      for (let i = 0; i < 400 && overloaded === undefined; i++) {
        const call = blob.put(payload);
        outcomes.push(call.catch(() => undefined));
        await new Promise((resolve) => setImmediate(resolve)); // let the batch reach the socket
        overloaded = await Promise.race([
          call.then(
            () => undefined,
            (error: RpcError) => (error.code === 'Overloaded' ? error : undefined),
          ),
          new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
        ]);
      }
      expect(overloaded?.code).toBe('Overloaded');
      expect(overloaded?.neverSent).toBe(true);
      consumer.destroy();
      await Promise.all(outcomes);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('stops reading from a consumer that does not read its answers, serves others, and resumes when it reads', async () => {
    const Big = defineService<{ big(bytes: number): Promise<string>; ping(): Promise<string> }>('test.Big', {
      methods: { big: {}, ping: {} },
    });
    let executed = 0;
    const provider = await testApp({ server: { writeHighWaterBytes: 1024 * 1024 } });
    provider.provide(Big, {
      big: (bytes) => {
        executed++;
        return 'x'.repeat(bytes);
      },
      ping: () => 'pong',
    });
    await provider.start();
    const raw = await rawFrameSocket(provider.address!);
    try {
      raw.socket.pause(); // this consumer stops reading
      for (let id = 1; id <= 20; id++) raw.request(id, 'test.Big', 'big', [1024 * 1024]);
      await waitFor(() => executed === 20);
      // 20 MiB of answers wait on the provider, far above its 1 MiB high-water mark: it stops reading
      // this connection, so these requests stay unread in the socket...
      for (let id = 21; id <= 40; id++) raw.request(id, 'test.Big', 'big', [1024 * 1024]);
      // ...while another consumer is served: many event-loop turns in which they could have been read.
      const consumer = await testApp();
      const other = consumer.refer(Big, { url: provider.address! });
      for (let i = 0; i < 20; i++) expect(await other.ping()).toBe('pong');
      expect(executed).toBe(20);
      raw.socket.resume(); // it reads again: the provider catches up and reads the rest
      await waitFor(() => executed === 40, 20_000);
      const frames = await raw.until((frame) => frame.kind === FrameKind.Response && frame.requestId === 40);
      expect(frames.filter((frame) => frame.kind === FrameKind.Response && frame.status === 0)).toHaveLength(
        40,
      );
    } finally {
      raw.close();
    }
  });

  it('closes connections idle longer than idleTimeoutMs and reopens them on demand', async () => {
    const provider = await testApp();
    provider.provide(Blob, { put: (data) => data.length, hang: async () => {} });
    await provider.start();
    const consumer = await testApp({ consumer: { idleTimeoutMs: 300 } });
    const blob = consumer.refer(Blob, { url: provider.address! });
    expect(await blob.put('ab')).toBe(2);
    expect(appInternals(provider).provider.server!.connectionCount).toBe(1);
    await waitFor(() => appInternals(provider).provider.server!.connectionCount === 0, 5_000);
    expect(await blob.put('abc')).toBe(3);
    expect(appInternals(provider).provider.server!.connectionCount).toBe(1);
  });
});

/**
 * Issue 23: compressors as an extension kind (deflate, gzip, brotli built in), over real sockets.
 * Each compressor both ways (the wire shows flag bit 1 and its id in byte 7, on the request and on the
 * answer), chosen per app, reference and method; negotiated (a provider answers only in the compressor
 * its caller offered, or uncompressed; a consumer refuses any other); each one's inflate bound (a small
 * compressed bomb refused `Serialization` naming maxInflateRatio, the connection and other calls
 * unharmed); and a consumer of protocol v1 (byte 7 always 0) still served in deflate.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type Compressor, deflateCompressor } from '../../src/extend.js';
import { defineService, ErrorCode, RpcError } from '../../src/index.js';
import { type Frame, FrameFlag, FrameKind } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter } from '../../src/protocol/frame-writer.js';
import { closeAll, testApp } from '../support/apps.js';
import { msgpack } from '../support/raw-client.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const Texts = defineService<{ echo(s: string): Promise<string>; other(s: string): Promise<string> }>(
  'test.Texts',
  { methods: { echo: {}, other: {} } },
);
const impl = { echo: (s: string) => s, other: (s: string) => s };

// ~60 KB that compresses a few times over, not thousands (a body past maxInflateRatio goes uncompressed)
const BIG = Array.from({ length: 12_000 }, (_, i) => ((i * 7919) % 100_003).toString(36)).join(' ');
const THRESHOLD = 1024;
const IDS = { deflate: 0, gzip: 1, brotli: 2 } as const;

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await closeAll();
});

interface Seen {
  kind: number;
  flags: number;
  compressor: number;
}

/** A proxy in front of `target` that decodes the frame headers going each way. */
async function recordingProxy(target: string) {
  const up: Seen[] = [];
  const down: Seen[] = [];
  const keep = (into: Seen[]) =>
    createFrameDecoder(
      (frame: Frame) => {
        if (frame.kind === FrameKind.Request || frame.kind === FrameKind.Response) {
          into.push({ kind: frame.kind, flags: frame.flags, compressor: frame.compressor });
        }
      },
      { maxFrameBytes: 64 * 1024 * 1024 },
    );
  const proxy = await startTcpProxy(target, {
    tap: () => {
      const upDecoder = keep(up);
      const downDecoder = keep(down);
      return { up: (chunk) => upDecoder.push(chunk), down: (chunk) => downDecoder.push(chunk) };
    },
  });
  cleanups.push(() => proxy.close());
  return { address: proxy.address, up, down };
}

async function compressingProvider(options: Parameters<typeof testApp>[0] = {}) {
  const app = await testApp({ compressThresholdBytes: THRESHOLD, ...options });
  app.provide(Texts, impl);
  await app.start();
  return app.address!;
}

async function failure(call: Promise<unknown>): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!RpcError.is(error)) throw new Error(`expected an RpcError, got ${String(error)}`);
  return error;
}

const compressed = (seen: Seen) => (seen.flags & FrameFlag.Compressed) !== 0;

describe.each(Object.entries(IDS))('compressor %s', (name, id) => {
  it('compresses requests and answers with it, both ways, when the consumer picks it (consumer.compressor)', async () => {
    const proxy = await recordingProxy(await compressingProvider());
    const consumer = await testApp({
      compressThresholdBytes: THRESHOLD,
      consumer: { compressor: name as 'gzip' },
    });
    const ref = consumer.refer(Texts, { url: proxy.address });
    expect(await ref.echo(BIG)).toBe(BIG);
    expect(proxy.up).toHaveLength(1);
    expect(proxy.down).toHaveLength(1);
    expect(compressed(proxy.up[0]!)).toBe(true);
    expect(proxy.up[0]!.flags & FrameFlag.AcceptsCompressed).toBeTruthy();
    expect(proxy.up[0]!.compressor).toBe(id);
    expect(compressed(proxy.down[0]!)).toBe(true);
    expect(proxy.down[0]!.compressor).toBe(id);
  });

  it('refuses a small compressed bomb with Serialization naming the bound; the connection and other calls go on', async () => {
    const address = await compressingProvider();
    const zeros = Buffer.alloc(6 * 1024 * 1024);
    const bomb =
      name === 'deflate'
        ? zlib.deflateRawSync(zeros, { level: 9 })
        : name === 'gzip'
          ? zlib.gzipSync(zeros, { level: 9 })
          : zlib.brotliCompressSync(zeros);
    expect(zeros.length / bomb.length).toBeGreaterThan(256); // a bomb by the default ratio
    const peer = await rawFrameSocket(address);
    cleanups.push(() => peer.close());
    peer.request(1, 'test.Texts', 'echo', [], FrameFlag.Compressed, { compressor: id, body: bomb });
    peer.request(2, 'test.Texts', 'echo', ['still here']);
    const frames = await peer.until((frame) => frame.requestId === 2);
    const refused = frames.find((frame) => frame.requestId === 1)!;
    expect(refused.status).toBe(ErrorCode.Serialization);
    const payload = msgpack.decode(refused.body) as { message: string };
    expect(payload.message).toMatch(
      new RegExp(
        `compressed body \\(${name}\\) inflates past 256 times its \\d+ bytes \\(maxInflateRatio\\)`,
      ),
    );
    const served = frames.find((frame) => frame.requestId === 2)!;
    expect(served.status).toBe(0);
    expect(msgpack.decode(served.body)).toBe('still here');
    // a well-behaved consumer of the same compressor is served meanwhile
    const consumer = await testApp({
      compressThresholdBytes: THRESHOLD,
      consumer: { compressor: name as 'gzip' },
    });
    expect(await consumer.refer(Texts, { url: address }).echo(BIG)).toBe(BIG);
  });

  it('refuses a compressed bomb in an answer on the consumer (Serialization, the bound named)', async () => {
    const zeros = Buffer.alloc(6 * 1024 * 1024);
    const bombOf: Record<string, Buffer> = {
      deflate: zlib.deflateRawSync(zeros, { level: 9 }),
      gzip: zlib.gzipSync(zeros, { level: 9 }),
      brotli: zlib.brotliCompressSync(zeros),
    };
    const fake = await fakeProvider(() => ({ compressor: id, body: bombOf[name]! }));
    const consumer = await testApp({
      compressThresholdBytes: THRESHOLD,
      consumer: { compressor: name as 'gzip', retries: 0 },
    });
    const error = await failure(consumer.refer(Texts, { url: fake }).echo('x'));
    expect(error.code).toBe('Serialization');
    expect(error.message).toMatch(new RegExp(`\\(${name}\\) inflates past 256 times`));
  });
});

/** A provider on a plain socket that answers every request with the compressed body `answer()` gives. */
async function fakeProvider(answer: () => { compressor: number; body: Uint8Array }): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    const writer = createFrameWriter({
      write: (batch) => socket.destroyed || socket.write(batch),
      writeWithBody: (batch, body) => {
        if (socket.destroyed) return;
        socket.write(batch);
        socket.write(body);
      },
      get pendingBytes() {
        return socket.writableLength;
      },
    });
    const decoder = createFrameDecoder(
      (frame) => {
        if (frame.kind !== FrameKind.Request) return;
        const { compressor, body } = answer();
        writer.response({
          requestId: frame.requestId,
          serializer: frame.serializer,
          status: 0,
          flags: FrameFlag.Compressed,
          compressor,
          body,
        });
      },
      { maxFrameBytes: 64 * 1024 * 1024 },
    );
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

describe('compressor choice and negotiation', () => {
  it('is chosen per reference and per method (refer options), over the app default', async () => {
    const proxy = await recordingProxy(await compressingProvider());
    const consumer = await testApp({ compressThresholdBytes: THRESHOLD });
    const ref = consumer.refer(Texts, {
      url: proxy.address,
      compressor: 'gzip',
      methods: { other: { compressor: 'brotli' } },
    });
    expect(await ref.echo(BIG)).toBe(BIG);
    expect(await ref.other(BIG)).toBe(BIG);
    expect(proxy.up.map((seen) => seen.compressor)).toEqual([IDS.gzip, IDS.brotli]);
    expect(proxy.down.map((seen) => seen.compressor)).toEqual([IDS.gzip, IDS.brotli]);
    expect(proxy.down.every(compressed)).toBe(true);
    const plain = consumer.refer(Texts, { url: proxy.address });
    expect(await plain.echo(BIG)).toBe(BIG);
    expect(proxy.up.at(-1)!.compressor).toBe(IDS.deflate); // the default
  });

  it('a consumer never takes an answer in a compressor it did not offer', async () => {
    const fake = await fakeProvider(() => ({
      compressor: IDS.gzip,
      body: zlib.gzipSync(msgpack.encode('x')),
    }));
    const consumer = await testApp({
      compressThresholdBytes: THRESHOLD,
      consumer: { compressor: 'brotli', retries: 0 },
    });
    const error = await failure(consumer.refer(Texts, { url: fake }).echo('x'));
    expect(error.code).toBe('Serialization');
    expect(error.message).toMatch(/answered in compressor id 1; the call offered only compressor id 2/);
  });

  it('a provider that lacks the offered compressor answers uncompressed, and refuses requests compressed with it', async () => {
    // a compressor only the consumer has: deflate's bytes under another name and id
    const private16: Compressor = { ...deflateCompressor, name: 'private16', id: 16 };
    const proxy = await recordingProxy(await compressingProvider());
    const consumer = await testApp({
      compressThresholdBytes: THRESHOLD,
      consumer: { compressor: 'private16' as 'gzip', retries: 0 },
      extend: (extensions) => extensions.register('compressor', 'private16', private16),
    });
    const ref = consumer.refer(Texts, { url: proxy.address });
    // a small request (not compressed) offering id 16: the big answer comes back uncompressed
    const small = 'x'.repeat(100);
    expect(await ref.echo(small)).toBe(small);
    expect(proxy.up[0]!.compressor).toBe(16);
    expect(compressed(proxy.up[0]!)).toBe(false);
    expect(compressed(proxy.down[0]!)).toBe(false);
    // a request compressed with it is refused, naming the id
    const error = await failure(ref.echo(BIG));
    expect(error.code).toBe('Serialization');
    expect(error.message).toMatch(/compressor id 16, which this side does not have/);
  });

  it('serves a consumer of protocol v1 (compressed flag, byte 7 always 0) in deflate', async () => {
    const address = await compressingProvider();
    const peer = await rawFrameSocket(address);
    cleanups.push(() => peer.close());
    const body = zlib.deflateRawSync(msgpack.encode([BIG]), { level: 1 });
    peer.request(7, 'test.Texts', 'echo', [], FrameFlag.Compressed | FrameFlag.AcceptsCompressed, {
      body,
    });
    const [answer] = await peer.until((frame) => frame.requestId === 7);
    expect(answer!.status).toBe(0);
    expect(answer!.flags & FrameFlag.Compressed).toBeTruthy();
    expect(answer!.compressor).toBe(0);
    expect(msgpack.decode(zlib.inflateRawSync(answer!.body))).toBe(BIG);
  });

  it('refuses an unknown consumer.compressor with a ConfigError naming the key', async () => {
    await expect(
      testApp({ compressThresholdBytes: THRESHOLD, consumer: { compressor: 'zstd' as 'gzip' } }),
    ).rejects.toThrow(/consumer\.compressor = "zstd".*deflate, gzip, brotli/);
  });
});

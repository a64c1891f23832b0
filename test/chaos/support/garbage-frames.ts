/**
 * fast-check arbitraries for hostile input to a Callisto server. `envelopeFrame` is a frame whose
 * envelope (magic, version, lengths) is sound but whose every other field may be wrong: any kind, flags,
 * serializer id, status and request id; metadata that is random, a real route with a mutated tail, or a
 * route that is cut short; a body that is random bytes or msgpack of random values. The server must
 * answer or ignore each one and keep the connection. `fatalTail` is what may only come last on a
 * connection: random bytes, a wrong magic or version, a length claim beyond the maximum, a frame cut
 * short, a large (allowed) claim followed by almost nothing, or a stream frame for a stream never opened.
 */
import fc from 'fast-check';
import { HEADER_BYTES, MAGIC_0, MAGIC_1, PROTOCOL_VERSION } from '../../../src/protocol/frame.js';
import { encodeRoutePrefix } from '../../../src/protocol/metadata.js';
import { createMsgpackSerializer } from '../../../src/serialization/msgpack.js';

const msgpack = createMsgpackSerializer();

interface Header {
  version?: number;
  kind: number;
  flags: number;
  serializer: number;
  status: number;
  requestId: number;
  /** Claimed lengths; default: the real ones. */
  metaLength?: number;
  bodyLength?: number;
}

export function frameBytes(header: Header, meta: Uint8Array, body: Uint8Array): Buffer {
  const out = Buffer.alloc(HEADER_BYTES + meta.length + body.length);
  out[0] = MAGIC_0;
  out[1] = MAGIC_1;
  out[2] = header.version ?? PROTOCOL_VERSION;
  out[3] = header.kind;
  out[4] = header.flags;
  out[5] = header.serializer;
  out[6] = header.status;
  out.writeUInt32BE(header.requestId >>> 0, 8);
  out.writeUInt32BE((header.metaLength ?? meta.length) >>> 0, 12);
  out.writeUInt32BE((header.bodyLength ?? body.length) >>> 0, 16);
  out.set(meta, HEADER_BYTES);
  out.set(body, HEADER_BYTES + meta.length);
  return out;
}

const byte = fc.integer({ min: 0, max: 255 });
const bytes = (maxLength: number) => fc.uint8Array({ maxLength });

const header: fc.Arbitrary<Header> = fc.record({
  // any kind but the stream kinds (4 message, 5 end, 6 window update): a stream frame for a stream that
  // was never opened is fatal (the connection is closed), so it comes only as a fatal tail ('stream')
  kind: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 }) },
    { weight: 1, arbitrary: byte.map((k) => (k >= 4 && k <= 6 ? k + 3 : k)) },
  ),
  flags: fc.oneof(fc.constantFrom(0, 1, 2, 4), byte),
  serializer: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(1, 2, 3) }, { weight: 1, arbitrary: byte }),
  status: fc.oneof(fc.constant(0), byte),
  requestId: fc.nat(),
});

const SERVICES = ['chaos.Service', 'no.Such', ''];
const METHODS = ['read', 'write', 'whoAmI', 'constructor', '__proto__', 'missing', ''];

/** A real-looking route prefix (known or unknown service and method). */
const route = fc
  .record({
    service: fc.oneof(fc.constantFrom(...SERVICES), fc.string({ maxLength: 20 })),
    version: fc.constantFrom('1.0.0', '2.0.0', ''),
    group: fc.constantFrom('', 'g'),
    method: fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 12 })),
  })
  .map((r) => encodeRoutePrefix(r.service, r.version, r.group, r.method));

/** Timeout budget + attachment block after a route; the count may lie about what follows. */
const tail = fc
  .record({
    timeoutMs: fc.oneof(fc.constantFrom(0, 1, 1_000, 0xffffffff), fc.nat()),
    count: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: 0, max: 0xffff })),
    rest: bytes(32),
  })
  .map(({ timeoutMs, count, rest }) => {
    const head = Buffer.alloc(6);
    head.writeUInt32BE(timeoutMs >>> 0, 0);
    head.writeUInt16BE(count, 4);
    return Buffer.concat([head, rest]);
  });

const meta: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 2, arbitrary: bytes(48) },
  { weight: 3, arbitrary: fc.tuple(route, tail).map(([r, t]) => Buffer.concat([r, t])) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(route, fc.nat())
      .map(([r, cut]) => r.subarray(0, r.length === 0 ? 0 : cut % r.length)),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(route, tail, fc.nat(), byte).map(([r, t, at, value]) => {
      const whole = Buffer.concat([r, t]);
      whole[at % whole.length] = value;
      return whole;
    }),
  },
);

const body: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 2, arbitrary: bytes(64) },
  {
    weight: 2,
    arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map((args) => msgpack.encode(args)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => msgpack.encode(value)) },
);

/** A frame with a sound envelope and anything inside. */
export const envelopeFrame: fc.Arbitrary<Buffer> = fc
  .tuple(header, meta, body)
  .map(([h, m, b]) => frameBytes(h, m, b));

export type FatalKind = 'random' | 'magic' | 'version' | 'oversized' | 'truncated' | 'large-claim' | 'stream';

/** What may only come last on a connection; `closes` says whether the server must close it at once. */
export const fatalTail = (maxFrameBytes: number): fc.Arbitrary<{ kind: FatalKind; bytes: Buffer }> =>
  fc.oneof(
    fc.uint8Array({ minLength: HEADER_BYTES, maxLength: 256 }).map((b) => {
      const out = Buffer.from(b);
      if (out[0] === MAGIC_0 && out[1] === MAGIC_1) out[0] = 0;
      return { kind: 'random' as const, bytes: out };
    }),
    fc.tuple(header, fc.integer({ min: 0, max: 0xffff })).map(([h, magic]) => {
      const out = frameBytes(h, Buffer.alloc(0), Buffer.alloc(0));
      out.writeUInt16BE(magic === (MAGIC_0 << 8) + MAGIC_1 ? 0 : magic, 0);
      return { kind: 'magic' as const, bytes: out };
    }),
    fc
      .tuple(
        header,
        byte.filter((v) => v !== PROTOCOL_VERSION),
      )
      .map(([h, version]) => ({
        kind: 'version' as const,
        bytes: frameBytes({ ...h, version }, Buffer.alloc(0), Buffer.alloc(0)),
      })),
    fc
      .tuple(header, fc.integer({ min: maxFrameBytes, max: 0xffffffff }), fc.boolean())
      .map(([h, claim, inMeta]) => ({
        kind: 'oversized' as const,
        bytes: frameBytes(
          inMeta ? { ...h, metaLength: claim } : { ...h, bodyLength: claim },
          Buffer.alloc(0),
          Buffer.alloc(0),
        ),
      })),
    fc.tuple(envelopeFrame, fc.nat()).map(([frame, cut]) => ({
      kind: 'truncated' as const,
      bytes: frame.subarray(0, 1 + (cut % (frame.length - 1))),
    })),
    fc
      .tuple(header, fc.integer({ min: 1 << 20, max: maxFrameBytes - HEADER_BYTES }), bytes(64))
      .map(([h, claim, some]) => ({
        kind: 'large-claim' as const,
        bytes: frameBytes({ ...h, metaLength: 0, bodyLength: claim }, Buffer.alloc(0), some),
      })),
    // a stream message, end or window update for a stream id above any request's (never opened)
    fc.tuple(fc.constantFrom(4, 5, 6), bytes(32)).map(([kind, some]) => ({
      kind: 'stream' as const,
      bytes: frameBytes(
        { kind, flags: 0, serializer: 2, status: 0, requestId: 0xffffffff },
        Buffer.alloc(0),
        kind === 6 ? Buffer.from([0, 0, 1, 0]) : some,
      ),
    })),
  );

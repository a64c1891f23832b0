/** Builds the frames and bodies a hostile peer sends: what a typed reference never would. */
import v8 from 'node:v8';
import zlib from 'node:zlib';
import {
  FrameFlag,
  FrameKind,
  HEADER_BYTES,
  MAGIC_0,
  MAGIC_1,
  PROTOCOL_VERSION,
} from '../../../src/protocol/frame.js';
import { encodeRoutePrefix } from '../../../src/protocol/metadata.js';
import { createMsgpackSerializer } from '../../../src/serialization/msgpack.js';

export const msgpack = createMsgpackSerializer();
export const SERIALIZER = { json: 1, msgpack: 2, v8: 3, protobuf: 4 } as const;

interface Header {
  kind: number;
  flags?: number;
  serializer?: number;
  status?: number;
  requestId?: number;
  /** Claimed body length; default the real one. */
  bodyLength?: number;
}

export function frame(header: Header, meta: Uint8Array, body: Uint8Array): Buffer {
  const out = Buffer.alloc(HEADER_BYTES + meta.length + body.length);
  out[0] = MAGIC_0;
  out[1] = MAGIC_1;
  out[2] = PROTOCOL_VERSION;
  out[3] = header.kind;
  out[4] = header.flags ?? 0;
  out[5] = header.serializer ?? SERIALIZER.msgpack;
  out[6] = header.status ?? 0;
  out.writeUInt32BE((header.requestId ?? 1) >>> 0, 8);
  out.writeUInt32BE(meta.length, 12);
  out.writeUInt32BE(header.bodyLength ?? body.length, 16);
  out.set(meta, HEADER_BYTES);
  out.set(body, HEADER_BYTES + meta.length);
  return out;
}

const tail = Buffer.from([0, 0, 0, 0, 0, 0]); // no timeout budget, no attachments

/** A request to `hostile.Target.<method>` (or to `options.service`, version 1.0.0). */
export function request(
  requestId: number,
  method: string,
  body: Uint8Array,
  options: { serializer?: number; flags?: number; service?: string } = {},
): Buffer {
  const { service = 'hostile.Target', ...header } = options;
  const meta = Buffer.concat([encodeRoutePrefix(service, '1.0.0', '', method), tail]);
  return frame({ kind: FrameKind.Request, requestId, ...header }, meta, body);
}

/** A response to request `requestId`. */
export function response(
  requestId: number,
  body: Uint8Array,
  options: { serializer?: number; flags?: number; status?: number } = {},
): Buffer {
  return frame({ kind: FrameKind.Response, requestId, ...options }, Buffer.alloc(0), body);
}

export function ping(requestId = 0): Buffer {
  return frame({ kind: FrameKind.Heartbeat, requestId }, Buffer.alloc(0), Buffer.alloc(0));
}

/** The 20-byte header of a frame that claims `bodyLength` bytes of body, followed by `some` of them. */
export function claim(kind: number, requestId: number, bodyLength: number, some = 0): Buffer {
  const head = frame({ kind, requestId, bodyLength }, Buffer.alloc(0), Buffer.alloc(0));
  return Buffer.concat([head, Buffer.alloc(some, 0x80)]);
}

/** msgpack of `[...before, [ {} x count ]]`: one byte per empty map, 64 bytes of heap each once decoded. */
export function emptyMaps(count: number, before: unknown[] = []): Buffer {
  const head = Buffer.from(msgpack.encode([...before, []]));
  // head ends with the empty array 0x90; replace it with an array32 header and the maps
  const prefix = head.subarray(0, head.length - 1);
  const array = Buffer.alloc(5 + count, 0x80);
  array[0] = 0xdd;
  array.writeUInt32BE(count, 1);
  return Buffer.concat([prefix, array]);
}

/** 13 bytes of node:v8 serialization describing a (sparse) array of 2^25 - 1 elements: 268 MB for V8. */
export const V8_HUGE_ARRAY = Buffer.from('ff0f61ffffff0f4000ffffff0f', 'hex');

/** A v8 body whose object has an own `__proto__` key (what `v8.serialize` writes for one). */
export function v8OwnProto(): Buffer {
  const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
  return v8.serialize([value]);
}

/** raw DEFLATE of `bytes` at `level` (9 reaches ~1000:1 on repetitive data, level 1 ~230:1). */
export function deflate(bytes: Uint8Array, level: number): Buffer {
  return zlib.deflateRawSync(bytes, { level });
}

export { FrameFlag, FrameKind, HEADER_BYTES };

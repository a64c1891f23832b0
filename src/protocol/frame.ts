/**
 * The frame layout of Callisto's wire protocol (see docs/protocol.md). Every message is one frame:
 * a fixed 20-byte header, then `metaLength` bytes of metadata, then `bodyLength` bytes of body.
 *
 * | offset | size | field                                                        |
 * |--------|------|--------------------------------------------------------------|
 * | 0      | 2    | magic 0xCA 0x11                                              |
 * | 2      | 1    | protocol version (1)                                         |
 * | 3      | 1    | kind: 0 request, 1 response, 2 heartbeat, 3 event,           |
 * |        |      | 4 stream message, 5 stream end, 6 window update              |
 * | 4      | 1    | flags: bit0 one-way, bit1 compressed body, bit2 pong,        |
 * |        |      | bit3 (requests) the caller accepts a compressed answer,      |
 * |        |      | bit4 (requests) opens a stream                               |
 * | 5      | 1    | serializer id of the body                                    |
 * | 6      | 1    | status: 0 ok, otherwise an ErrorCode                         |
 * | 7      | 1    | compressor id (with flag bit 1 or 3; 0 deflate), else 0      |
 * | 8      | 4    | request id (uint32, big-endian)                              |
 * | 12     | 4    | metadata length (uint32, big-endian)                         |
 * | 16     | 4    | body length (uint32, big-endian)                             |
 */

export const MAGIC_0 = 0xca;
export const MAGIC_1 = 0x11;
export const PROTOCOL_VERSION = 1;
export const HEADER_BYTES = 20;

/** Default maximum size of one frame, header included: 8 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;

export const FrameKind = {
  Request: 0,
  Response: 1,
  Heartbeat: 2,
  Event: 3,
  /** One message of the stream whose id (the opening request's) the frame carries (docs/protocol.md, Streams). */
  StreamMessage: 4,
  /** The consumer's half-close of its stream's input. */
  StreamEnd: 5,
  /** Body: uint32 credit increment, for the stream of the frame's id, or 0 for the connection. */
  WindowUpdate: 6,
} as const;
export type FrameKindValue = (typeof FrameKind)[keyof typeof FrameKind];

export const FrameFlag = {
  OneWay: 1,
  Compressed: 2,
  Pong: 4,
  /** On a request: the consumer takes an answer compressed with the compressor byte 7 names. */
  AcceptsCompressed: 8,
  /** On a request: it opens a stream of a method declared `stream` (docs/protocol.md, Streams). */
  Stream: 16,
} as const;

/** Status byte of a successful response. */
export const STATUS_OK = 0;

/** One decoded frame. `meta` and `body` are views into the received bytes, valid until the next chunk. */
export interface Frame {
  kind: number;
  flags: number;
  serializer: number;
  status: number;
  /** Byte 7: the compressor of a compressed body, or on a request the one its caller takes answers in. */
  compressor: number;
  requestId: number;
  meta: Buffer;
  body: Buffer;
}

/** Names of the events carried by event frames. */
export const EventName = {
  /** The provider is shutting down: route no new calls to it. */
  GoAway: 'goaway',
  /** The consumer gave up the call whose request id the frame carries: abort its handler's signal. */
  Cancel: 'cancel',
  /**
   * This process is leaving but its address stays served (a worker of `server.workers` retiring): route
   * no new calls on this connection, open a new one to the same address for them.
   */
  Reconnect: 'reconnect',
  /**
   * The consumer presents credentials for the calls it sends from now on over this connection (body: the
   * token, UTF-8); its calls then carry none of their own (docs/security.md).
   */
  Authenticate: 'authenticate',
  /** The provider takes `authenticate`: the consumer's calls may leave their credentials out from now on. */
  Authenticated: 'authenticated',
} as const;

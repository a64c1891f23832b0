/**
 * The gRPC wire pieces shared by the gRPC entry and the gRPC consumer: length-prefixed messages fed one
 * byte at a time and many per chunk, the length checked before anything is buffered, `grpc-timeout`
 * both ways, and the status tables.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, type ErrorCodeName } from '../../src/core/rpc-error.js';
import {
  encodeGrpcMessage,
  FLAG_COMPRESSED,
  GrpcMessageDecoder,
  GrpcMessageTooLargeError,
} from '../../src/protocol/grpc/message-frame.js';
import { GrpcStatus, grpcStatusOf, rpcCodeOf } from '../../src/protocol/grpc/status.js';
import { formatGrpcTimeout, parseGrpcTimeout } from '../../src/protocol/grpc/timeout.js';

describe('gRPC length-prefixed messages', () => {
  const messages = [Buffer.from('hello'), Buffer.alloc(0), Buffer.alloc(70_000, 7)];
  const wire = Buffer.concat([
    encodeGrpcMessage(messages[0]!),
    encodeGrpcMessage(messages[1]!),
    encodeGrpcMessage(messages[2]!, FLAG_COMPRESSED),
  ]);

  it('decodes the same messages fed one byte at a time and all at once', () => {
    const whole = new GrpcMessageDecoder(1 << 20).push(wire);
    const bytewise = new GrpcMessageDecoder(1 << 20);
    const one: Buffer[] = [];
    for (let i = 0; i < wire.length; i++) {
      for (const message of bytewise.push(wire.subarray(i, i + 1))) one.push(message.data);
    }
    expect(whole.map((m) => m.data)).toEqual(messages);
    expect(one).toEqual(messages);
    expect(whole.map((m) => m.flags)).toEqual([0, 0, FLAG_COMPRESSED]);
    expect(bytewise.atBoundary).toBe(true);
  });

  it('refuses a length over the limit from its 5-byte prefix, before any of it arrives', () => {
    const decoder = new GrpcMessageDecoder(1024);
    const prefix = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    expect(() => decoder.push(prefix)).toThrow(GrpcMessageTooLargeError);
    expect(decoder.buffered).toBe(5);
  });

  it('holds a partial message and says the stream did not end on a boundary', () => {
    const decoder = new GrpcMessageDecoder(1024);
    expect(decoder.push(wire.subarray(0, 7))).toEqual([]);
    expect(decoder.atBoundary).toBe(false);
  });
});

describe('grpc-timeout', () => {
  it('reads every unit, rounding up to whole milliseconds', () => {
    expect(parseGrpcTimeout('2H')).toBe(7_200_000);
    expect(parseGrpcTimeout('3M')).toBe(180_000);
    expect(parseGrpcTimeout('5S')).toBe(5000);
    expect(parseGrpcTimeout('250m')).toBe(250);
    expect(parseGrpcTimeout('1500u')).toBe(2);
    expect(parseGrpcTimeout('1n')).toBe(1);
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
  });

  it('refuses malformed values with an error naming them', () => {
    for (const bad of ['', '10', 'm', '123456789m', '1.5S', '-1S', '10x']) {
      expect(parseGrpcTimeout(bad)).toBeInstanceOf(Error);
    }
  });

  it('writes milliseconds while they fit in 8 digits and round-trips', () => {
    expect(formatGrpcTimeout(300)).toBe('300m');
    expect(formatGrpcTimeout(0.2)).toBe('1m');
    expect(formatGrpcTimeout(200_000_000)).toBe('200000S');
    for (const ms of [1, 999, 99_999_999, 250_000_000]) {
      expect(parseGrpcTimeout(formatGrpcTimeout(ms))).toBeGreaterThanOrEqual(ms);
    }
  });
});

describe('gRPC status tables', () => {
  it('maps every Callisto code to a status and the exact code survives a round trip between Callisto peers', () => {
    for (const code of Object.keys(ErrorCode) as ErrorCodeName[]) {
      const status = grpcStatusOf(code);
      expect(status).toBeGreaterThan(0);
      expect(rpcCodeOf(status, code)).toBe(code);
    }
  });

  it('maps statuses from any server, and refuses a callisto-code that contradicts the status', () => {
    expect(rpcCodeOf(GrpcStatus.DEADLINE_EXCEEDED)).toBe('Timeout');
    expect(rpcCodeOf(GrpcStatus.UNAVAILABLE)).toBe('Network');
    expect(rpcCodeOf(GrpcStatus.UNIMPLEMENTED)).toBe('MethodNotFound');
    expect(rpcCodeOf(GrpcStatus.NOT_FOUND)).toBe('ProviderError');
    expect(rpcCodeOf(99)).toBe('ProviderError');
    // UNKNOWN with a claim of Overloaded (never run) is not believed
    expect(rpcCodeOf(GrpcStatus.UNKNOWN, 'Overloaded')).toBe('ProviderError');
    expect(rpcCodeOf(GrpcStatus.UNAVAILABLE, 'Overloaded')).toBe('Overloaded');
  });
});

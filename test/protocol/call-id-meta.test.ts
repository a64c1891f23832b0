/**
 * The call id is written as one more request attachment, in place of a caller's own `callisto-call-id`,
 * and read apart from the other attachments (a hostile one dropped).
 */
import { describe, expect, it } from 'vitest';
import type { Frame } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter } from '../../src/protocol/frame-writer.js';
import { decodeRequestMeta, encodeRoutePrefix } from '../../src/protocol/metadata.js';

function roundTrip(attachments: Record<string, string> | undefined, callId: string | undefined) {
  const batches: Buffer[] = [];
  const writer = createFrameWriter({
    write: (batch) => batches.push(batch),
    writeWithBody: (batch, body) => batches.push(batch, body),
    pendingBytes: 0,
  });
  writer.request({
    requestId: 1,
    flags: 0,
    serializer: 2,
    routePrefix: encodeRoutePrefix('demo.Echo', '1.0.0', '', 'say'),
    timeoutMs: 0,
    attachments,
    callId,
    body: Buffer.from([7, 7]),
  });
  writer.flush();
  const frames: Frame[] = [];
  createFrameDecoder((frame) => frames.push(frame)).push(Buffer.concat(batches));
  expect(frames).toHaveLength(1);
  expect(Buffer.from(frames[0]!.body)).toEqual(Buffer.from([7, 7]));
  const meta = decodeRequestMeta(Buffer.from(frames[0]!.meta));
  return { attachments: { ...meta.attachments }, callId: meta.callId };
}

describe('the call id on the wire', () => {
  it('travels as the callisto-call-id attachment, with or without others, replacing a caller’s own', () => {
    expect(roundTrip(undefined, 'p-1')).toEqual({ attachments: {}, callId: 'p-1' });
    expect(roundTrip({ trace: 't' }, 'p-2')).toEqual({ attachments: { trace: 't' }, callId: 'p-2' });
    expect(roundTrip({ 'callisto-call-id': 'a much longer forged id', x: 'y' }, 'p-3')).toEqual({
      attachments: { x: 'y' },
      callId: 'p-3',
    });
    expect(roundTrip({ trace: 't' }, undefined)).toEqual({ attachments: { trace: 't' }, callId: undefined });
  });

  it('is dropped when malformed (too long, or a character outside A-Z a-z 0-9 . _ : -)', () => {
    for (const bad of ['two words', 'x'.repeat(65), 'new\nline', 'é', '']) {
      expect(roundTrip({ 'callisto-call-id': bad }, undefined)).toEqual({
        attachments: {},
        callId: undefined,
      });
    }
    expect(roundTrip({ 'callisto-call-id': 'A-z_0.9:' + 'x'.repeat(56) }, undefined).callId).toHaveLength(64);
  });
});

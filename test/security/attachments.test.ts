/** The `authorization` attachment read as a known key (protocol/metadata.ts): the same as any other. */
import { describe, expect, it } from 'vitest';
import { attachmentsByteLength, readAttachments, writeAttachments } from '../../src/protocol/metadata.js';

describe('attachments with known keys', () => {
  it('round-trips authorization and keys that only look like it', () => {
    const attachments = {
      authorization: 'Bearer abc',
      authorizatiON: 'same length, other bytes',
      authorizatio: 'a prefix',
      authorizations: 'longer',
      'x-trace': 'é ü',
    };
    const out = Buffer.alloc(attachmentsByteLength(attachments));
    writeAttachments(out, 0, attachments);
    const read = readAttachments(out, 0);
    expect({ ...read.attachments }).toEqual(attachments);
    expect(read.end).toBe(out.length);
  });
});

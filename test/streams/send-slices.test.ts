/**
 * A producer that never awaits (a generator yielding as fast as it can) sends its messages in slices
 * (SEND_SLICE_BYTES, protocol/stream-flow.ts): the consumer gets the first messages while the rest of the
 * window is still being made, instead of the whole window at once at the end of the producer's run (the
 * two sides then took turns: bench S6 at 55% of the raw baseline).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SEND_SLICE_BYTES } from '../../src/protocol/stream-flow.js';
import { closeAll, testApp } from '../support/apps.js';
import { FloodDef } from './fixtures/flood-service.js';

afterEach(closeAll);

const MESSAGE_BYTES = 1024;

describe('stream send slices', () => {
  it('hands the reader its first messages before the producer has spent its window', async () => {
    let produced = 0;
    const provider = await testApp();
    provider.provide(FloodDef, {
      async *flood(size: number) {
        for (let n = 0; ; n++) {
          produced++;
          yield { n, pad: 'x'.repeat(size) };
        }
      },
      produced: () => produced,
      ping: () => 'pong',
    });
    await provider.start();
    const consumer = await testApp();
    const ref = consumer.refer(FloodDef, {
      url: `127.0.0.1:${provider.port}`,
      retries: 0,
      timeoutMs: 10_000,
    });
    let producedAtFirst = -1;
    for await (const message of ref.flood(MESSAGE_BYTES)) {
      if (message.n === 0) producedAtFirst = produced;
      if (message.n === 200) break;
    }
    // the default window (64 KiB) holds about 64 of these; a slice about 16
    const slice = Math.ceil(SEND_SLICE_BYTES / MESSAGE_BYTES);
    expect(producedAtFirst).toBeGreaterThan(0);
    expect(producedAtFirst).toBeLessThanOrEqual(slice * 3);
  });
});

/**
 * Hostile stream frames against a consumer, from a fake provider (support/fake-provider.ts): messages
 * beyond the stream's window, a message for a stream never opened, a window update that overflows.
 * Each closes that connection (the stream's iteration fails with Network, naming the violation), and
 * the consumer keeps no stream of it.
 */
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError } from '../../src/index.js';
import { createFrameWriter } from '../../src/protocol/frame-writer.js';
import { openStreams, streaming } from '../streams/fixture.js';
import { closeAll, testApp } from '../support/apps.js';
import { msgpack } from '../support/raw-client.js';
import { waitFor } from '../support/wait-for.js';
import { closeFakeProviders, startFakeProvider } from './support/fake-provider.js';

afterEach(async () => {
  await closeAll();
  await closeFakeProviders();
});

function writerOn(socket: net.Socket) {
  return createFrameWriter({
    write: (batch) => {
      if (!socket.destroyed) socket.write(batch);
    },
    writeWithBody: (batch, body) => {
      if (socket.destroyed) return;
      socket.write(batch);
      socket.write(body);
    },
    get pendingBytes() {
      return socket.writableLength;
    },
  });
}

/** The error the stream's iteration ends with; `slowly`: the reader takes one message, then waits. */
async function iterationError(
  attack: (socket: net.Socket, streamId: number) => void,
  slowly = false,
): Promise<RpcError> {
  const fake = await startFakeProvider({ onRequest: (socket, request) => attack(socket, request.requestId) });
  const consumer = await testApp();
  const ref = consumer.refer(streaming, { url: fake.address, retries: 0 });
  const error = await (async () => {
    const iterator = ref.count(10, -1)[Symbol.asyncIterator]();
    await iterator.next();
    // a reader behind: nothing consumed, no credit returned, until the connection closes
    if (slowly) await waitFor(() => fake.closed > 0 || undefined);
    for (;;) if ((await iterator.next()).done) return;
  })().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RpcError.is(error), String(error)).toBe(true);
  expect(openStreams(consumer)).toBe(0);
  return error as RpcError;
}

describe('hostile: stream frames on a consumer', () => {
  it('closes the connection on messages beyond the stream window', async () => {
    const error = await iterationError((socket, id) => {
      const writer = writerOn(socket);
      const message = msgpack.encode({ n: 1, pad: 'x'.repeat(1_000) });
      for (let n = 0; n < 80; n++) writer.streamMessage(id, msgpack.id, message);
    }, true);
    expect(error.code).toBe('Network');
    expect(error.message).toContain('window');
  });

  it('closes the connection on a message for a stream never opened', async () => {
    const error = await iterationError((socket, id) => {
      const writer = writerOn(socket);
      writer.streamMessage(id, msgpack.id, msgpack.encode({ n: 0 }));
      writer.streamMessage(id + 1000, msgpack.id, msgpack.encode({ n: 1 }));
    });
    expect(error.code).toBe('Network');
    expect(error.message).toContain('never opened');
  });

  it('closes the connection on a window update that overflows', async () => {
    const error = await iterationError((socket, id) => {
      const writer = writerOn(socket);
      writer.streamMessage(id, msgpack.id, msgpack.encode({ n: 0 }));
      writer.windowUpdate(id, 2 ** 31 - 1);
    });
    expect(error.code).toBe('Network');
    expect(error.message).toContain('overflows');
  });
});

/**
 * The gRPC entry's streams with grpc-js as the client: server, client and two-way streams arrive in
 * order and complete; a client's cancel stops the handler (its `finally` runs); a client that does not
 * read holds the handler at its `yield` (HTTP/2 flow control: the next message is pulled only when the
 * stream can take it).
 */
import http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { encodeGrpcMessage } from '../../src/protocol/grpc/message-frame.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { type GreeterClient, GreeterDef, greeterClient, greeterImpl, newSeen } from './greeter.js';

const clients: GreeterClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

async function provider(seen = newSeen()) {
  const app = await testApp();
  app.provide(GreeterDef, greeterImpl(seen));
  await app.start();
  const client = greeterClient(`127.0.0.1:${app.grpcPort}`);
  clients.push(client);
  return { app, client, seen };
}

function collect(
  call: grpc.ClientReadableStream<{ value: number }>,
): Promise<{ values: number[]; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    const values: number[] = [];
    call.on('data', (message: { value: number }) => values.push(message.value));
    call.on('error', (error: grpc.ServiceError) => resolve({ values, error }));
    call.on('end', () => resolve({ values }));
  });
}

describe('gRPC entry: streams (grpc-js client)', () => {
  it('a server stream delivers every message in order, then ends OK', async () => {
    const { client, seen } = await provider();
    const { values, error } = await collect(client.countTo({ n: 500, delay_ms: 0 }));
    expect(error).toBeUndefined();
    expect(values).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    await waitFor(() => seen.finished.includes('countTo:finally'));
    expect(seen.finished).toContain('countTo:done');
  });

  it('a client stream reads every message of the client, and answers once', async () => {
    const { client } = await provider();
    const total = await new Promise<{ total: number }>((resolve, reject) => {
      const call = client.sum((error: grpc.ServiceError | null, value: { total: number }) =>
        error ? reject(error) : resolve(value),
      );
      for (let i = 1; i <= 100; i++) call.write({ value: i });
      call.end();
    });
    expect(total).toEqual({ total: 5050 });
  });

  it('a two-way stream answers each message as it comes', async () => {
    const { client, seen } = await provider();
    const call = client.echo();
    const received: number[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on('data', (message: { value: number }) => {
        received.push(message.value);
        if (received.length < 5) call.write({ value: received.length + 1 });
        else call.end();
      });
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write({ value: 1 });
    await ended;
    expect(received).toEqual([10, 20, 30, 40, 50]);
    await waitFor(() => seen.finished.includes('echo:finally'));
  });

  it("the client's cancel stops the handler: its finally runs", async () => {
    const { client, seen } = await provider();
    const call = client.countTo({ n: 1_000_000, delay_ms: 5 });
    await new Promise<void>((resolve) => call.once('data', () => resolve()));
    call.on('error', () => {});
    call.cancel();
    await waitFor(() => seen.finished.includes('countTo:finally'), 10_000);
    expect(seen.finished).not.toContain('countTo:done');
  });

  it('a client that does not read holds the handler at its yield (flow control)', async () => {
    let produced = 0;
    const Big = defineService<{ flood(): AsyncIterable<string> }>('callisto.test.Flood', {
      methods: { flood: { stream: 'server' } },
    });
    const app = await testApp();
    app.provide(Big, {
      async *flood() {
        for (;;) {
          produced++;
          yield 'x'.repeat(16 * 1024);
        }
      },
    });
    await app.start();
    // node:http2 as the client: application/grpc+json, and a stream it never reads
    const session = http2.connect(`http://127.0.0.1:${app.grpcPort}`);
    const stream = session.request({
      ':method': 'POST',
      ':path': '/callisto.test.Flood/flood',
      'content-type': 'application/grpc+json',
      te: 'trailers',
    });
    stream.end(encodeGrpcMessage(Buffer.from('[]')));
    stream.pause();
    await waitFor(() => produced > 0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const held = produced;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // bounded by the windows and buffers (well under a MiB), not growing while nobody reads
    expect(produced).toBe(held);
    expect(produced * 16 * 1024).toBeLessThan(2 * 1024 * 1024);
    // reading again lets it go on
    stream.resume();
    await waitFor(() => produced > held + 10);
    stream.close();
    session.close();
  });
});

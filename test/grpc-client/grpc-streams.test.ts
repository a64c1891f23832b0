/**
 * gRPC streams on grpc-js servers, as Callisto's stream methods expose them: a server stream is an
 * async iterable (order and completeness; HTTP/2 flow control holds the server while the caller does
 * not read; `break` cancels, grpc-js's handler sees 'cancelled'), a client stream a promise of the
 * server's answer to the caller's input, a two-way stream both; an AbortSignal cancels.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { closeServers, Greeter, greeterServer, type Item, JsonService, rejection } from './support.js';

afterEach(async () => {
  await closeAll();
  await closeServers();
});

async function* numbers(count: number): AsyncGenerator<Partial<Item>> {
  for (let i = 1; i <= count; i++) yield { value: i };
}

describe('gRPC consumer: streams on grpc-js', () => {
  it('a server stream delivers every message in order, then ends', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const values: number[] = [];
    for await (const item of greeter.count(500, 10)) {
      values.push(item.value);
      expect(item.pad).toBe('p'.repeat(10));
    }
    expect(values).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('a grpc+json server stream (no protobuf): each message one JSON value', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const json = consumer.refer(JsonService, { url: server.url, retries: 0 });
    const ticks: Array<{ tick: number; at: string }> = [];
    for await (const tick of json.ticks(50)) ticks.push(tick);
    expect(ticks).toEqual(Array.from({ length: 50 }, (_, tick) => ({ tick, at: `t${tick}` })));
  });

  it('does not read ahead of the caller: the server blocks on flow control; break cancels it', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const total = 20_000;
    let read = 0;
    for await (const item of greeter.count(total, 1_000)) {
      expect(item.value).toBe(read);
      read++;
      if (read === 3) {
        // the caller stops reading: the server soon cannot write any more, and stays so (grpc-js
        // waits for 'drain' that HTTP/2's flow control does not give while nothing is read here)
        let last = -1;
        await waitFor(
          () => {
            const steady = server.seen.blocked && server.seen.written === last;
            last = server.seen.written;
            return steady;
          },
          10_000,
          { intervalMs: 150 },
        );
        // the inbox's read-ahead, node's buffers and the HTTP/2 windows: far from all 20 000 (20 MB)
        expect(server.seen.written).toBeLessThan(1_500);
        break;
      }
    }
    await waitFor(() => server.seen.cancelled === 1, 10_000);
    expect(server.seen.written).toBeLessThan(total);
  });

  it('a client stream sends every message and gets the answer', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    expect(await greeter.sum(numbers(1_000))).toBe(500_500);
  });

  it('a two-way stream answers message by message, in order', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const answers: number[] = [];
    for await (const item of greeter.echo(numbers(200))) answers.push(item.value);
    expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => (i + 1) * 10));
  });

  it('an AbortSignal cancels a client stream: grpc-js sees it cancelled', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const controller = new AbortController();
    async function* slow(): AsyncGenerator<Partial<Item>> {
      yield { value: 1 };
      await new Promise((wake) => setTimeout(wake, 60_000).unref());
    }
    const pending = withOptions(greeter, { signal: controller.signal }).sum(slow());
    await waitFor(() => server.seen.calls['sum'] === 1, 10_000);
    controller.abort();
    const error = await rejection(pending);
    expect(RpcError.is(error) && error.code).toBe('Cancelled');
    await waitFor(() => server.seen.cancelled === 1, 10_000);
  });

  it('a break out of a two-way stream cancels it on the server', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    async function* endless(): AsyncGenerator<Partial<Item>> {
      for (let i = 0; ; i++) {
        yield { value: i };
        await new Promise((wake) => setTimeout(wake, 5));
      }
    }
    let got = 0;
    for await (const _ of greeter.echo(endless())) {
      if (++got === 5) break;
    }
    await waitFor(() => server.seen.cancelled === 1, 10_000);
  });
});

/**
 * The gRPC connection's life under the pool and the consumer's limits: one HTTP/2 session per server
 * however many calls (multiplexed), reconnected with the pool's backoff once the server is back on its
 * port, the reference's `limits.actives` refusing before anything is sent, a server's GOAWAY (grpc-js
 * `tryShutdown`) letting calls in flight finish, and nothing left open once the app closed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError, withOptions } from '../../src/index.js';
import { freePort } from '../setup/free-port.js';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { closeServers, Greeter, greeterServer, rejection } from './support.js';

afterEach(async () => {
  await closeAll();
  await closeServers();
});

describe('gRPC consumer: connection lifecycle', () => {
  it('multiplexes concurrent calls on one session, and reconnects once the server is back', async () => {
    const server = await greeterServer({ name: 'first', port: await freePort() });
    const consumer = await testApp({ consumer: { outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => greeter.wait(20 + (i % 5))));
    expect(answers).toHaveLength(50);
    expect(server.seen.calls['wait']).toBe(50);
    expect(server.seen.peers.size).toBe(1);

    const port = server.port;
    await server.close();
    const down = await rejection(greeter.say('down'));
    expect(RpcError.is(down) && ['Network', 'NoProvider'].includes(down.code)).toBe(true);

    // a new server on the same port: the pool finds it back (bounded backoff, no call needed to wake it)
    const back = await greeterServer({ name: 'back', port });
    expect(back.port).toBe(port);
    await waitFor(
      () =>
        greeter.say('again').then(
          (answer) => answer === 'hello again from back',
          () => false,
        ),
      15_000,
      { intervalMs: 100 },
    );
  });

  it("the reference's limits refuse before sending: the server never sees the refused call", async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0, limits: { actives: 1 } });
    const first = greeter.wait(500);
    const refused = await rejection(greeter.wait(10));
    expect(RpcError.is(refused) && refused.code).toBe('Overloaded');
    expect(await first).toBe('waited 500');
    expect(server.seen.calls['wait']).toBe(1);
  });

  it('a server shutting down gracefully (GOAWAY) finishes the calls in flight', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const inFlight = withOptions(greeter, { timeoutMs: 10_000 }).wait(300);
    await waitFor(() => server.seen.calls['wait'] === 1);
    const stopped = new Promise<void>((done) => server.server.tryShutdown(() => done()));
    expect(await inFlight).toBe('waited 300');
    await stopped;
  });

  it('leaves no socket or timer behind once the app closed', async () => {
    const before = resourceCounts();
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    await withOptions(greeter, { timeoutMs: 5_000 }).say('bye');
    await consumer.close();
    // the server still up: only the consumer closing its session closes the sockets
    await waitFor(() => {
      const now = resourceCounts();
      return (now['TCPSocketWrap'] ?? 0) <= (before['TCPSocketWrap'] ?? 0);
    });
    await server.close();
  });
});

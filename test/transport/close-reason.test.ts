/**
 * A connection the consumer is closing waits for its calls in flight; when the provider's side goes away
 * meanwhile, those calls fail with what happened (the peer closed), not with "closed by this side".
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { defineService, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const Echo = defineService<{ echo(n: number): Promise<number> }>('test.CloseReasonEcho', {
  methods: { echo: {} },
});

const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeAll();
});

describe('the reason a closing connection gives its calls', () => {
  it('a call in flight while this side drains fails as closed by the peer when the peer goes away', async () => {
    const sockets: net.Socket[] = [];
    let requested!: () => void;
    const request = new Promise<void>((resolve) => {
      requested = resolve;
    });
    const server = net.createServer((socket) => {
      sockets.push(socket);
      socket.on('data', () => requested()); // reads the call, never answers
    });
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const consumer = await testApp({ consumer: { timeoutMs: 30_000, retries: 0 } });
    const echo = consumer.refer(Echo, { url: `127.0.0.1:${port}` });
    const call = echo.echo(1).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    await request;
    const connection = appInternals(consumer).consumer.pool.connections()[0]!;
    const closing = consumer.close();
    // this side is draining: it waits for the call before it ends the connection
    await waitFor(() => connection.state.kind === 'draining', 5_000, {
      message: 'the connection never drained',
    });
    for (const socket of sockets) socket.destroy();
    const error = await call;
    await closing;
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe('Network');
    expect((error as RpcError).message).not.toMatch(/by this side/);
    expect((error as RpcError).message).toMatch(new RegExp(`connection to 127\\.0\\.0\\.1:${port} closed`));
  });
});

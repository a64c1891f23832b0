/**
 * Reconnection over real sockets: a provider that crashes (no goodbye) and comes back on the same port
 * is reconnected by the consumer's pool in the background, with no call needed to trigger it, and calls
 * reach the new process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { freePort } from '../setup/free-port.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

async function providerOn(name: string, port: number) {
  const impl = new FlakyImpl(name);
  const app = await testApp({ application: name, server: { port } });
  app.provide(FlakyDef, impl);
  await app.start();
  return { app, impl };
}

describe('reconnect', () => {
  it('reconnects to a provider restarted on the same port, in the background, and calls reach it', async () => {
    // a port outside the kernel's ephemeral range: no outgoing connection can take it while it is down
    const first = await providerOn('first', await freePort());
    const port = first.app.port!;
    const consumer = await testApp({ application: 'consumer' });
    const ref = consumer.refer(FlakyDef, { url: `127.0.0.1:${port}`, retries: 0 });
    expect(await ref.read('a')).toBe('first:a');

    first.app.destroy(); // a crash: the connection drops without a go-away
    const handle = appInternals(consumer).consumer.pool.handle('127.0.0.1', port);
    await waitFor(() => !handle.available, 5_000);
    await expect(ref.read('while down')).rejects.toMatchObject({ code: 'Network' });

    const second = await providerOn('second', port);
    // The pool reconnects by itself (backoff with jitter, 200 ms doubling): the new process sees the
    // connection before any call is made.
    await waitFor(() => appInternals(second.app).provider.server!.connectionCount === 1, 15_000);
    await waitFor(() => handle.available, 5_000);
    expect(second.impl.reads).toBe(0);
    expect(await ref.read('b')).toBe('second:b');
    expect(appInternals(consumer).consumer.pool.connections()).toHaveLength(1);
  });
});

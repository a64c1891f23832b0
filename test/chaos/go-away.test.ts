/**
 * Edges of a graceful shutdown, made deterministic.
 *
 * - The race behind chaos 1: calls a consumer has sent but the provider has not read yet when it
 *   announces "going away" and closes. Every such call must be answered (executed, or refused with a
 *   Shutdown error that says it never ran) — none may be cut off with a Network error, which for a
 *   non-idempotent call would be a failure nobody can safely retry.
 * - The shutdown deadline passing with calls still running: they are answered Shutdown with
 *   `details.started`; idempotent ones fail over to another provider, the others fail (never run twice).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { RpcError } from '../../src/index.js';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { rawConnection, route } from '../support/raw-client.js';
import { waitFor } from '../support/wait-for.js';
import { ChaosDef, createChaosImpl } from './fixtures/chaos-service.js';

afterEach(closeAll);

describe('chaos: graceful shutdown edges', () => {
  it('answers every call sent before the consumer read the announcement, then closes', async () => {
    const before = resourceCounts();
    const provider = await testApp({ application: 'provider' });
    provider.provide(ChaosDef, createChaosImpl({ name: 'p' }));
    await provider.start();
    const server = appInternals(provider).provider.server!;
    const connection = rawConnection(provider.address!);
    await connection.ready();
    const write = route('chaos.Service', 'write');

    // Queued now, on the wire at the end of this tick: after the provider has already said goodbye.
    const calls = Array.from({ length: 500 }, (_, id) =>
      connection.call(write, [id], { timeoutMs: 5_000 }).then(
        () => 'ok',
        (error: unknown) => RpcError.from(error).code,
      ),
    );
    server.goAway();
    server.refuse();
    const closed = server.close();
    const outcomes = await Promise.all(calls);
    await closed;

    const counts: Record<string, number> = {};
    for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
    expect(Object.keys(counts).filter((code) => code !== 'ok' && code !== 'Shutdown')).toEqual([]);
    // The consumer closed its side once answered; the provider's close waited for that, not the grace.
    await waitFor(() => connection.state.kind === 'closed', 1_000);
    await provider.close();
    await waitFor(() => {
      const after = resourceCounts();
      return ['TCPSocketWrap', 'TCPServerWrap'].every((k) => (after[k] ?? 0) <= (before[k] ?? 0));
    });
  });

  it('a consumer told "going away" sends no new call on that connection', async () => {
    const provider = await testApp({ application: 'provider' });
    provider.provide(ChaosDef, createChaosImpl({ name: 'p', delayMs: 200 }));
    await provider.start();
    const server = appInternals(provider).provider.server!;
    const connection = rawConnection(provider.address!);
    await connection.ready();
    const write = route('chaos.Service', 'write');
    const first = connection.call(write, [1], { timeoutMs: 5_000 });
    await waitFor(() => server.active === 1);
    server.goAway();
    await waitFor(() => connection.state.kind === 'draining');
    const refused = await connection.call(write, [2], { timeoutMs: 5_000 }).catch(RpcError.from);
    expect(refused).toMatchObject({ code: 'Shutdown', neverSent: true });
    // The call in flight is still answered, then the consumer closes its side by itself.
    expect(await first).toBe(1);
    await waitFor(() => connection.state.kind === 'closed' && server.connectionCount === 0, 3_000);
  });

  it('fails idempotent calls over when the shutdown deadline interrupts them, and only those', async () => {
    const writes: string[] = [];
    const start = async (name: string, delayMs: number) => {
      const app = await testApp({ application: name, shutdownTimeoutMs: 200 });
      app.provide(
        ChaosDef,
        createChaosImpl({ name, delayMs, onExecuted: (line) => line.startsWith('w') && writes.push(line) }),
      );
      return app.start();
    };
    const slow = await start('slow', 5_000);
    const fast = await start('fast', 0);
    const consumer = await testApp({ application: 'consumer' });
    const ref = consumer.refer(ChaosDef, {
      url: [slow.address!, fast.address!],
      loadbalance: 'roundrobin',
      outlierDetection: false,
      timeoutMs: 10_000,
    });
    const settle = (call: Promise<number>) => call.then(String, (error: unknown) => RpcError.from(error));
    const reads = Array.from({ length: 10 }, (_, i) => settle(ref.read(i)));
    const writeCalls = Array.from({ length: 10 }, (_, i) => settle(ref.write(100 + i)));
    await waitFor(() => appInternals(slow).provider.server!.active === 10);
    await slow.close();

    expect(await Promise.all(reads)).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
    const outcomes = await Promise.all(writeCalls);
    const failed = outcomes.filter((o): o is RpcError => RpcError.is(o));
    expect(failed).toHaveLength(5);
    expect(failed.every((e) => e.code === 'Shutdown' && e.details.started === true)).toBe(true);
    expect(new Set(writes).size).toBe(writes.length);
  });
});

/**
 * The gRPC entry's unary calls with grpc-js as the client, over real sockets on the provider's own
 * port: the answer, metadata both ways, every Callisto error code as its gRPC status (the table of
 * protocol/grpc/status.ts), `grpc-timeout` as the handler's deadline and DEADLINE_EXCEEDED at it, gzip,
 * and Callisto's own consumers still served on the same port.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorCodeName } from '../../src/core/rpc-error.js';
import { GRPC_STATUS_TABLES } from '../../src/protocol/grpc/status.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { type GreeterClient, GreeterDef, greeterClient, greeterImpl, newSeen, unary } from './greeter.js';

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

describe('gRPC entry: unary calls (grpc-js client)', () => {
  it('serves a unary call on the provider own port, with metadata both ways', async () => {
    const { app, client, seen } = await provider();
    expect(app.grpcPort).toBe(app.port);
    const metadata = new grpc.Metadata();
    metadata.set('x-tenant', 'acme');
    metadata.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    const answer = await unary<{ message: string }>(client, 'sayHello', { name: 'ada' }, { metadata });
    expect(answer.error).toBeUndefined();
    expect(answer.value).toEqual({ message: 'hello ada' });
    expect(seen.attachments[0]).toMatchObject({
      'x-tenant': 'acme',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    expect(answer.trailers?.get('x-greeted')).toEqual(['ada']);
  });

  it('the same port still serves Callisto consumers', async () => {
    const { app } = await provider();
    const consumerApp = await testApp();
    const greeter = consumerApp.refer(GreeterDef, { url: `127.0.0.1:${app.port}` });
    expect(await greeter.sayHello('tcp')).toEqual({ message: 'hello tcp' });
  });

  it('answers every Callisto error code with its gRPC status, the exact code in callisto-code', async () => {
    const { client } = await provider();
    for (const [code, status] of Object.entries(GRPC_STATUS_TABLES.toGrpc)) {
      const answer = await unary(client, 'fail', { code });
      expect(answer.error?.code, code).toBe(status);
      expect(answer.error?.details, code).toBe(`failed with ${code}`);
      expect(answer.trailers?.get('callisto-code'), code).toEqual([code as ErrorCodeName]);
      expect(answer.trailers?.get('grpc-status-details-bin')?.length, code).toBe(1);
    }
  });

  it('an unknown method and an unknown service are UNIMPLEMENTED', async () => {
    const { app } = await provider();
    const raw = new grpc.Client(`127.0.0.1:${app.grpcPort}`, grpc.credentials.createInsecure());
    clients.push(raw);
    const call = (path: string) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        raw.makeUnaryRequest(
          path,
          (value: Buffer) => value,
          (value: Buffer) => value,
          Buffer.alloc(0),
          (error) => resolve(error),
        ),
      );
    expect((await call('/callisto.test.Greeter/nope'))?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect((await call('/callisto.test.Nobody/sayHello'))?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('grpc-timeout reaches the handler as its deadline; at it the call is DEADLINE_EXCEEDED', async () => {
    const { client, seen } = await provider();
    const before = Date.now();
    const answer = await unary(client, 'slow', { ms: 10_000 }, { deadline: new Date(Date.now() + 300) });
    expect(answer.error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(seen.deadlines[0]).toBeGreaterThan(before);
    expect(seen.deadlines[0]).toBeLessThan(before + 2_000);
    // the handler's signal was aborted: its finally ran
    await waitFor(() => seen.finished.length > 0);
    expect(seen.finished[0]).toMatch(/^slow:(Timeout|Cancelled)$/);
  });

  it('a client that cancels a unary call aborts its handler signal with Cancelled', async () => {
    const { client, seen } = await provider();
    let outcome: grpc.ServiceError | null | undefined;
    const call = client.slow({ ms: 10_000 }, (error: grpc.ServiceError | null) => {
      outcome = error;
    });
    // the handler runs (and has read its signal) before the client cancels
    await waitFor(() => seen.deadlines.length > 0);
    call.cancel();
    await waitFor(() => seen.finished.length > 0);
    expect(seen.finished[0]).toBe('slow:Cancelled');
    await waitFor(() => outcome !== undefined);
    expect(outcome?.code).toBe(grpc.status.CANCELLED);
  });

  it('takes and answers gzip-compressed messages', async () => {
    const { app } = await provider();
    const client = greeterClient(`127.0.0.1:${app.grpcPort}`, grpc.credentials.createInsecure(), {
      'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
    });
    clients.push(client);
    const name = 'x'.repeat(5_000);
    const answer = await unary<{ message: string }>(client, 'sayHello', { name });
    expect(answer.error).toBeUndefined();
    expect(answer.value?.message).toBe(`hello ${name}`);
  });
});

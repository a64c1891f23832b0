/**
 * `refer()` on grpc-js servers, unary calls over real sockets: protobuf and `application/grpc+json`
 * bodies, the deadline reaching the server as `grpc-timeout` (grpc-js's `call.getDeadline()`),
 * attachments as metadata both ways, every gRPC status as its documented RpcError code (with
 * `grpc-message` and `details.grpcStatus`), and the address forms.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { type Attachments, type Filter, RpcError, withOptions } from '../../src/index.js';
import { GRPC_STATUS_TABLES, GrpcStatus, type GrpcStatusName } from '../../src/protocol/grpc/status.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { closeServers, Greeter, greeterServer, JsonService, rejection } from './support.js';

afterEach(async () => {
  await closeAll();
  await closeServers();
});

describe('gRPC consumer: unary calls on grpc-js', () => {
  it('calls protobuf and grpc+json methods; the address alone says gRPC', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    expect(await greeter.say('ann')).toBe('hello ann from server');
    expect(await greeter.getUser(7)).toEqual({ id: 7, name: 'user 7 of server' });
    const jsonRef = consumer.refer(JsonService, { url: `grpc://127.0.0.1:${server.port}`, protocol: 'grpc' });
    expect(await jsonRef.add(2, 40)).toBe(42);
    expect(await jsonRef.info()).toEqual({ name: 'server', tags: ['a', 'b'] });
    expect(server.seen.calls).toMatchObject({ say: 1, getUser: 1, add: 1, info: 1 });
  });

  it('sends the deadline as grpc-timeout: grpc-js sees it, and the call times out here', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const before = Date.now();
    await withOptions(greeter, { timeoutMs: 5_000 }).say('deadline');
    const deadline = server.seen.deadlines['say'];
    const remaining = (deadline instanceof Date ? deadline.getTime() : Number(deadline)) - before;
    expect(remaining).toBeGreaterThan(3_000);
    expect(remaining).toBeLessThanOrEqual(5_500);

    const started = Date.now();
    const late = await rejection(withOptions(greeter, { timeoutMs: 300 }).wait(3_000));
    expect(RpcError.is(late) && late.code).toBe('Timeout');
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it("aborting a call's signal resets its stream: grpc-js sees the call cancelled", async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const controller = new AbortController();
    const pending = withOptions(greeter, { signal: controller.signal, timeoutMs: 20_000 }).wait(15_000);
    await waitFor(() => server.seen.calls['wait'] === 1);
    controller.abort();
    const error = await rejection(pending);
    expect(RpcError.is(error) && error.code).toBe('Cancelled');
    await waitFor(() => server.seen.cancelled === 1);
  });

  it('carries attachments as metadata, and the response metadata back', async () => {
    const server = await greeterServer();
    const seen: Attachments[] = [];
    const recorder: Filter = (next) => async (invocation) => {
      try {
        return await next(invocation);
      } finally {
        seen.push({ ...invocation.responseAttachments });
      }
    };
    const consumer = await testApp({ filters: { consumer: [recorder] } });
    const greeter = consumer.refer(Greeter, {
      url: server.url,
      retries: 0,
      attachments: { 'x-tenant': 'acme', 'X-Echo': 'ping' },
    });
    await greeter.say('meta');
    const sent = server.seen.metadata['say']!;
    expect(sent.get('x-tenant')).toEqual(['acme']);
    expect(sent.get('x-echo')).toEqual(['ping']);
    expect(sent.get('callisto-call-id')).toHaveLength(1);
    // a header sent before the answer, a trailer after it
    expect(seen[0]).toMatchObject({ 'x-echoed': 'ping', 'x-served-by': 'server' });
    expect(seen[0]?.['grpc-status']).toBeUndefined();
    expect(seen[0]?.['content-type']).toBeUndefined();

    // trailers come back too, on a failure
    await rejection(greeter.fail(GrpcStatus.NOT_FOUND, 'nope'));
    expect(seen[1]).toMatchObject({ 'x-trailer': 'kept' });
  });

  it('maps every gRPC status to its documented RpcError code, with grpc-message and details', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const names = Object.keys(GrpcStatus).filter((name) => name !== 'OK') as GrpcStatusName[];
    for (const name of names) {
      const status = GrpcStatus[name];
      const error = await rejection(greeter.fail(status, `because ${name} — ünïcode`));
      expect(RpcError.is(error), name).toBe(true);
      const rpc = error as RpcError;
      expect({ name, code: rpc.code }).toEqual({ name, code: GRPC_STATUS_TABLES.fromGrpc[name] });
      expect(rpc.message).toBe(`because ${name} — ünïcode`);
      expect(rpc.details).toMatchObject({ grpcStatus: status, grpcStatusName: name });
      expect(rpc.remote).toBe(true);
    }
  });

  it('keeps the rich status (grpc-status-details-bin) as details.grpcStatusDetailsBin', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const error = await rejection(consumer.refer(Greeter, { url: server.url, retries: 0 }).fail(9, 'rich'));
    const details = (error as RpcError).details as { grpcStatusDetailsBin?: string };
    expect(Buffer.from(details.grpcStatusDetailsBin ?? '', 'base64').toString()).toBe('rich status');
  });

  it('an unknown method is MethodNotFound (grpc-js answers UNIMPLEMENTED)', async () => {
    const server = await greeterServer();
    const consumer = await testApp();
    const { defineService } = await import('../../src/index.js');
    const Missing = defineService<{ nothing(): Promise<void> }>('demo.Missing', { methods: { nothing: {} } });
    const error = await rejection(consumer.refer(Missing, { url: server.url, retries: 0 }).nothing());
    expect(RpcError.is(error) && error.code).toBe('MethodNotFound');
    expect((error as RpcError).details).toMatchObject({ grpcStatus: grpc.status.UNIMPLEMENTED });
  });

  it('refuses addresses that are not gRPC ones for a grpc reference', async () => {
    const consumer = await testApp();
    expect(() => consumer.refer(Greeter, { url: 'http://127.0.0.1:1', protocol: 'grpc' })).toThrow(
      /grpc:\/\/host:port or grpcs:\/\/host:port/,
    );
    expect(() => consumer.refer(Greeter, { url: '127.0.0.1:1', protocol: 'grpc' })).toThrow(
      /host:port without a scheme/,
    );
  });
});

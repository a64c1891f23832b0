/**
 * The standard health service (grpc.health.v1.Health, queried with grpc-js over grpc-health-check's
 * proto) and graceful shutdown: SERVING while the provider serves, NOT_SERVING once its shutdown
 * starts (a Watch sees the change); GOAWAY goes to every HTTP/2 connection and the calls in flight on
 * it still finish with their answers.
 */
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProto } from 'grpc-health-check';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeGrpcMessage } from '../../src/protocol/grpc/message-frame.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { GREETER_PROTO, GreeterDef, greeterImpl, newSeen } from './greeter.js';

// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients are typed by the loaded package
const clients: any[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

// biome-ignore lint/suspicious/noExplicitAny: the loaded package's shape
function healthClient(port: number): any {
  const definition = protoLoader.loadSync(healthProto, { keepCase: true, enums: String, defaults: true });
  // biome-ignore lint/suspicious/noExplicitAny: the loaded package's shape
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const client = new loaded.grpc.health.v1.Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  clients.push(client);
  return client;
}

// biome-ignore lint/suspicious/noExplicitAny: a grpc-js client
function check(client: any, service: string): Promise<{ status?: string; code?: number }> {
  return new Promise((resolve) =>
    client.Check({ service }, (error: grpc.ServiceError | null, answer: { status: string }) =>
      resolve(error ? { code: error.code } : { status: answer.status }),
    ),
  );
}

const SlowRequest = protobuf.loadSync(GREETER_PROTO).lookupType('callisto.test.SlowRequest');

describe('gRPC entry: health and graceful shutdown', () => {
  it('Check answers SERVING for the server and a served service, NOT_FOUND for another', async () => {
    const app = await testApp();
    app.provide(GreeterDef, greeterImpl(newSeen()));
    await app.start();
    const client = healthClient(app.grpcPort!);
    expect(await check(client, '')).toEqual({ status: 'SERVING' });
    expect(await check(client, 'callisto.test.Greeter')).toEqual({ status: 'SERVING' });
    expect(await check(client, 'nobody.Else')).toEqual({ code: grpc.status.NOT_FOUND });
  });

  it('shutdown: NOT_SERVING at once, GOAWAY to the connection, the call in flight still answered', async () => {
    const seen = newSeen();
    const app = await testApp({ shutdownTimeoutMs: 10_000 });
    app.provide(GreeterDef, greeterImpl(seen));
    await app.start();
    const port = app.grpcPort!;
    const statuses: string[] = [];
    const watch = healthClient(port).Watch({ service: '' });
    watch.on('data', (answer: { status: string }) => statuses.push(answer.status));
    watch.on('error', () => {});
    await waitFor(() => statuses.length === 1);
    expect(statuses).toEqual(['SERVING']);

    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const at: Record<string, number> = {};
    session.on('goaway', () => {
      at.goaway ??= Date.now();
    });
    const stream = session.request({
      ':method': 'POST',
      ':path': '/callisto.test.Greeter/slow',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.end(encodeGrpcMessage(SlowRequest.encode({ ms: 1_500 }).finish()));
    const answer = new Promise<{ status: string | undefined; body: Buffer }>((resolve) => {
      const chunks: Buffer[] = [];
      let status: string | undefined;
      stream.on('trailers', (trailers) => {
        at.answer = Date.now();
        status = trailers['grpc-status'] as string;
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('close', () => resolve({ status, body: Buffer.concat(chunks) }));
    });
    await waitFor(() => seen.deadlines.length === 1);

    const closed = app.close();
    await waitFor(() => statuses.includes('NOT_SERVING'));
    const { status, body } = await answer;
    // GOAWAY came while the call was in flight (not when the connection closed after it), and the
    // call was still answered
    await waitFor(() => at.goaway !== undefined);
    // the handler sleeps 1.5 s: GOAWAY went out at the start of the shutdown, long before the answer
    expect(at.answer! - at.goaway!).toBeGreaterThan(500);
    expect(status).toBe('0');
    expect(body.length).toBeGreaterThan(5);
    await closed;
    expect(seen.finished).toEqual(['slow:done']);
    session.destroy();
  });
});

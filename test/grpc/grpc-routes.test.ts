/**
 * Which service a gRPC request reaches, and in which format, over real sockets (node:http2 as the
 * client): Dubbo 3 Triple's `tri-service-version` and `tri-service-group` headers select the version
 * and group; without a version the one service of that name is meant, several are refused naming
 * them; `application/grpc+json` serves any service (arguments as a JSON array, the result as JSON);
 * `application/grpc` for a service without protobuf messages is UNIMPLEMENTED, and a content type that
 * is not gRPC (nor Connect's `application/json` / `application/proto`) is HTTP 415.
 */
import http2 from 'node:http2';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { encodeGrpcMessage, GrpcMessageDecoder } from '../../src/protocol/grpc/message-frame.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

interface Answer {
  status: number;
  grpcStatus: string | undefined;
  grpcMessage: string | undefined;
  messages: Buffer[];
}

function call(port: number, path: string, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, te: 'trailers', ...headers });
    const decoder = new GrpcMessageDecoder(1 << 20);
    const messages: Buffer[] = [];
    let status = 0;
    let grpcStatus: string | undefined;
    let grpcMessage: string | undefined;
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) grpcStatus = h['grpc-status'] as string;
      if (h['grpc-message'] !== undefined) grpcMessage = decodeURIComponent(h['grpc-message'] as string);
    };
    stream.on('response', (h) => {
      status = Number(h[':status']);
      take(h);
    });
    stream.on('trailers', take);
    stream.on('data', (chunk: Buffer) => messages.push(...decoder.push(chunk).map((m) => m.data)));
    stream.on('close', () => {
      session.close();
      resolve({ status, grpcStatus, grpcMessage, messages });
    });
    stream.end(body);
  });
}

function rawCall(
  port: number,
  path: string,
  headers: http2.OutgoingHttpHeaders,
  body: Buffer,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, ...headers });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('close', () => {
      session.close();
      resolve({ status, body: Buffer.concat(chunks).toString() });
    });
    stream.end(body);
  });
}

const json = (value: unknown) => encodeGrpcMessage(Buffer.from(JSON.stringify(value)));
const JSON_GRPC = { 'content-type': 'application/grpc+json' };

interface Versioned {
  which(): Promise<string>;
}

describe('gRPC entry: routes, Triple headers, formats', () => {
  it('tri-service-version and tri-service-group select the service; several versions need one', async () => {
    const app = await testApp();
    for (const [version, group] of [
      ['1.0', ''],
      ['2.0', ''],
      ['1.0', 'blue'],
    ] as const) {
      const def = defineService<Versioned>('triple.Versioned', { version, group, methods: { which: {} } });
      app.provide(def, { which: async () => `${version}/${group || '-'}` });
    }
    await app.start();
    const port = app.grpcPort!;
    const answer = async (headers: http2.OutgoingHttpHeaders) => {
      const got = await call(port, '/triple.Versioned/which', { ...JSON_GRPC, ...headers }, json([]));
      return got.grpcStatus === '0' ? JSON.parse(got.messages[0]!.toString()) : got;
    };
    expect(await answer({ 'tri-service-version': '2.0' })).toBe('2.0/-');
    expect(await answer({ 'tri-service-version': '1.0' })).toBe('1.0/-');
    expect(await answer({ 'tri-service-version': '1.0', 'tri-service-group': 'blue' })).toBe('1.0/blue');
    // the blue group has one version: it needs none named
    expect(await answer({ 'tri-service-group': 'blue' })).toBe('1.0/blue');
    const ambiguous = await answer({});
    expect(ambiguous.grpcStatus).toBe('3');
    expect(ambiguous.grpcMessage).toMatch(/1\.0, 2\.0.*tri-service-version/);
    expect((await answer({ 'tri-service-version': '9.9' })).grpcStatus).toBe('12');
  });

  it('application/grpc+json serves a service without protobuf; application/grpc is UNIMPLEMENTED for it; not gRPC is 415', async () => {
    const Plain = defineService<{ add(a: number, b: number): Promise<{ sum: number }> }>('plain.Adder', {
      methods: { add: {} },
    });
    const app = await testApp();
    app.provide(Plain, { add: async (a, b) => ({ sum: a + b }) });
    await app.start();
    const port = app.grpcPort!;
    const ok = await call(port, '/plain.Adder/add', JSON_GRPC, json([2, 3]));
    expect(ok.grpcStatus).toBe('0');
    expect(JSON.parse(ok.messages[0]!.toString())).toEqual({ sum: 5 });
    // the .proto spelling of the method name finds it too
    const pascal = await call(port, '/plain.Adder/Add', JSON_GRPC, json([1, 1]));
    expect(JSON.parse(pascal.messages[0]!.toString())).toEqual({ sum: 2 });
    const proto = await call(port, '/plain.Adder/add', { 'content-type': 'application/grpc' }, json([2, 3]));
    expect(proto.grpcStatus).toBe('12');
    expect(proto.grpcMessage).toMatch(/application\/grpc\+json/);
    const notGrpc = await call(
      port,
      '/plain.Adder/add',
      { 'content-type': 'text/plain' },
      Buffer.from('[2,3]'),
    );
    expect(notGrpc.status).toBe(415);
    // parameters and case do not matter; a served protocol's format that is not served is UNIMPLEMENTED
    // naming the ones that are, and each protocol answers in its own way
    const spelled = await call(
      port,
      '/plain.Adder/add',
      { 'content-type': 'Application/GRPC+JSON; charset=utf-8' },
      json([4, 5]),
    );
    expect(JSON.parse(spelled.messages[0]!.toString())).toEqual({ sum: 9 });
    const served = /is not served: application\/grpc\[-web\]/;
    const grpcUnserved = await call(
      port,
      '/plain.Adder/add',
      { 'content-type': 'application/grpc+cbor' },
      json([2, 3]),
    );
    expect(grpcUnserved.grpcStatus).toBe('12');
    expect(grpcUnserved.grpcMessage).toMatch(served);
    // gRPC-Web and Connect's streams end in a last message: trailer lines, or JSON
    const webUnserved = await call(
      port,
      '/plain.Adder/add',
      { 'content-type': 'application/grpc-web-text' },
      json([2, 3]),
    );
    expect(webUnserved.status).toBe(200);
    const trailers = webUnserved.messages.at(-1)!.toString('latin1');
    expect(trailers).toMatch(/^grpc-status: 12\r\n/);
    expect(decodeURIComponent(trailers)).toMatch(served);
    const connectUnserved = await call(
      port,
      '/plain.Adder/add',
      { 'content-type': 'application/connect+cbor' },
      json([2, 3]),
    );
    expect(connectUnserved.status).toBe(200);
    const end = JSON.parse(connectUnserved.messages.at(-1)!.toString()) as {
      error: { code: string; message: string };
    };
    expect(end.error.code).toBe('unimplemented');
    expect(end.error.message).toMatch(served);
    // application/json is the Connect protocol's unary call: the bare JSON body, the bare answer
    const connect = await rawCall(
      port,
      '/plain.Adder/add',
      { 'content-type': 'application/json' },
      Buffer.from('[2,3]'),
    );
    expect(connect).toEqual({ status: 200, body: '{"sum":5}' });
  });
});

/**
 * The gRPC consumer's bounds and TLS: `grpcs://` verified with `consumer.tls` (the CA of the suite's
 * TLS tests) and refused without it, naming the key; gzip responses read, a gzip
 * bomb refused at the message limit; a response message over the limit refused from its 5-byte prefix;
 * providers found in a registry record that says gRPC (`transport: 'grpc'`).
 */
import fs from 'node:fs';
import type http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppOptions, RpcError } from '../../src/index.js';
import { encodeGrpcMessage, FLAG_COMPRESSED } from '../../src/protocol/grpc/message-frame.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import {
  closeFaultServers,
  closeServers,
  faultServer,
  Greeter,
  greeterServer,
  rejection,
  root,
} from './support.js';

let pki: Pki;
const dirs: string[] = [];
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  await closeAll();
  await closeServers();
  await closeFaultServers();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const pem = (value: string): Buffer => (fs.existsSync(value) ? fs.readFileSync(value) : Buffer.from(value));

/** A response: headers, one message (flags, bytes), OK trailers. */
function answerWith(flags: number, message: Buffer, encoding = 'identity') {
  return (stream: http2.ServerHttp2Stream) => {
    stream.resume();
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-encoding': encoding },
      { waitForTrailers: true },
    );
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(encodeGrpcMessage(message, flags));
  };
}

const SayReply = root.lookupType('demo.SayReply');

describe('gRPC consumer: TLS', () => {
  it('calls a grpc-js server over grpcs://, verified with consumer.tls; refuses without it', async () => {
    const server = await greeterServer({
      credentials: grpc.ServerCredentials.createSsl(null, [
        { private_key: pem(pki.server.key), cert_chain: pem(pki.server.cert) },
      ]),
    });
    expect(server.url).toMatch(/^grpcs:/);
    const withCa = await testApp({ consumer: { tls: { ca: pki.ca } } as AppOptions['consumer'] });
    expect(await withCa.refer(Greeter, { url: server.url, retries: 0 }).say('tls')).toBe(
      'hello tls from server',
    );

    const without = await testApp();
    const refused = await rejection(without.refer(Greeter, { url: server.url, retries: 0 }).say('no'));
    expect(RpcError.is(refused) && refused.code).toBe('Network');
    expect((refused as RpcError).message).toMatch(/consumer\.tls\.ca/);
    expect((refused as RpcError).neverSent).toBe(true);

    const otherCa = await testApp({ consumer: { tls: { ca: pki.otherCa } } as AppOptions['consumer'] });
    const untrusted = await rejection(otherCa.refer(Greeter, { url: server.url, retries: 0 }).say('no'));
    expect(RpcError.is(untrusted) && untrusted.code).toBe('Network');
    expect((untrusted as RpcError).neverSent).toBe(true);
    expect(server.seen.calls['say']).toBe(1);
  });
});

describe('gRPC consumer: limits', () => {
  it('reads a gzip response within the limit (grpc-js never compresses: a scripted server; grpcio in grpc-python.test.ts)', async () => {
    const reply = Buffer.from(SayReply.encode({ value: 'y'.repeat(300_000) }).finish());
    const server = await faultServer('respond', answerWith(FLAG_COMPRESSED, zlib.gzipSync(reply), 'gzip'));
    const consumer = await testApp();
    expect(await consumer.refer(Greeter, { url: server.url, retries: 0 }).say('z')).toBe('y'.repeat(300_000));
  });

  it('refuses a gzip bomb at the message limit, without inflating it whole', async () => {
    // 64 MiB of zeros in a SayReply, gzip: about 64 KiB on the wire
    const huge = Buffer.from(SayReply.encode({ value: '\0'.repeat(64 * 1024 * 1024) }).finish());
    const bomb = zlib.gzipSync(huge, { level: 9 });
    expect(bomb.length).toBeLessThan(200_000);
    const server = await faultServer('respond', answerWith(FLAG_COMPRESSED, bomb, 'gzip'));
    const consumer = await testApp({ server: { maxFrameBytes: 1024 * 1024 } as AppOptions['server'] });
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    const error = await rejection(greeter.say('boom'));
    expect(RpcError.is(error) && error.code).toBe('Serialization');
    expect((error as RpcError).message).toMatch(/inflates past the consumer's limit of 1048576 bytes/);
  });

  it('refuses a response message over the limit from its prefix (grpc-js answering 200 KB; limit 64 KiB)', async () => {
    const server = await greeterServer();
    const consumer = await testApp({ server: { maxFrameBytes: 64 * 1024 } as AppOptions['server'] });
    const greeter = consumer.refer(Greeter, { url: server.url, retries: 0 });
    expect(await greeter.big(1_000)).toHaveLength(1_000);
    const error = await rejection(greeter.big(200_000));
    expect(RpcError.is(error) && error.code).toBe('Serialization');
    expect((error as RpcError).message).toMatch(/over the consumer's limit of 65536 bytes/);
    // the connection stays usable
    expect(await greeter.big(10)).toHaveLength(10);
  });

  it('refuses a message that claims 4 GiB after reading only its prefix', async () => {
    const prefix = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    const server = await faultServer('respond', (stream) => {
      stream.resume();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(prefix);
    });
    const consumer = await testApp();
    const error = await rejection(consumer.refer(Greeter, { url: server.url, retries: 0 }).say('x'));
    expect(RpcError.is(error) && error.code).toBe('Serialization');
    expect((error as RpcError).message).toMatch(/4294967295 bytes, over the consumer's limit/);
  });
});

describe('gRPC consumer: responses that are not gRPC', () => {
  it('maps an HTTP error page by its status without reading it as messages; not remote', async () => {
    const page = Buffer.from(`<html>${'bad gateway '.repeat(1000)}</html>`);
    const proxy = await faultServer('respond', (stream) => {
      stream.resume();
      stream.respond({ ':status': 503, 'content-type': 'text/html' });
      stream.end(page);
    });
    const consumer = await testApp();
    const error = await rejection(consumer.refer(Greeter, { url: proxy.url, retries: 0 }).say('x'));
    expect(RpcError.is(error) && error.code).toBe('Network');
    expect((error as RpcError).remote).toBe(false);
    expect((error as RpcError).details).toMatchObject({ httpStatus: 503, grpcStatusName: 'UNAVAILABLE' });

    const html = await faultServer('respond', (stream) => {
      stream.resume();
      stream.respond({ ':status': 200, 'content-type': 'text/html' });
      stream.end(page);
    });
    const other = await rejection(consumer.refer(Greeter, { url: html.url, retries: 0 }).say('x'));
    expect(RpcError.is(other) && other.code).toBe('Internal');
    expect((other as RpcError).message).toMatch(/not a gRPC response/);
  });
});

describe('gRPC consumer: registry records', () => {
  it("finds gRPC servers by their records (transport 'grpc'); other protocols skip them", async () => {
    const a = await greeterServer({ name: 'a' });
    const b = await greeterServer({ name: 'b' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-grpc-records-'));
    dirs.push(dir);
    const providers = path.join(dir, 'callisto', 'demo.Greeter:1.0.0', 'providers');
    fs.mkdirSync(providers, { recursive: true });
    for (const server of [a, b]) {
      const record = {
        service: 'demo.Greeter',
        version: '1.0.0',
        host: '127.0.0.1',
        port: server.port,
        transport: 'grpc',
      };
      fs.writeFileSync(path.join(providers, `127.0.0.1:${server.port}.json`), JSON.stringify(record));
    }
    const consumer = await testApp({ registry: `file://${dir}` });
    const greeter = consumer.refer(Greeter, { protocol: 'grpc', retries: 0, loadbalance: 'roundrobin' });
    const answers = new Set<string>();
    for (let i = 0; i < 6; i++) answers.add(await greeter.say('r'));
    expect(answers).toEqual(new Set(['hello r from a', 'hello r from b']));

    // a Callisto reference of the same service finds no provider it can call
    const framed = consumer.refer(Greeter, { retries: 0 });
    const error = await rejection(framed.say('no'));
    expect(RpcError.is(error) && error.code).toBe('NoProvider');
  });
});

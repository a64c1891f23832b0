/**
 * `refer(def, { protocol: 'http' })` over real sockets: the reference calls the provider's HTTP/JSON
 * entry (an HTTP connection behind the same endpoint) and gets what a framed call gets: results (tagged
 * values), declared business errors with their fields, RpcError codes (MethodNotFound, Unauthorized,
 * Timeout at the deadline it sends), the call id in the provider's access log, credentials; it finds
 * the entry's address in the registry record and skips providers not serving HTTP (and a callisto
 * reference skips HTTP-only ones); a failure before the request was sent fails over; an answer over
 * the consumer's limit is refused; HTTPS is verified with consumer.tls.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import {
  type AppOptions,
  defineService,
  type LogFields,
  type Logger,
  RpcError,
  withOptions,
} from '../../src/index.js';
import { InsufficientFundsError, UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { codeOf } from '../support/outcome-code.js';
import { waitFor } from '../support/wait-for.js';

let pki: Pki;
const dirs: string[] = [];
const servers: http.Server[] = [];
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  await closeAll();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

interface Line {
  message: string;
  fields: LogFields | undefined;
}

function capture(): { lines: Line[]; logger: Logger } {
  const lines: Line[] = [];
  const keep = (message: string, fields?: LogFields) => lines.push({ message, fields });
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

/** A provider of the user service on TCP and HTTP (both ports free), with the given server keys. */
async function provider(server: Record<string, unknown> = {}, options: AppOptions = {}) {
  const log = capture();
  const app = await testApp({
    logger: log.logger,
    logLevel: 'info',
    ...options,
    server: {
      port: 0,
      http: { port: 0 },
      accessLog: ['test.UserService'],
      ...server,
    } as AppOptions['server'],
  });
  const impl = new UserServiceImpl();
  app.provide(UserServiceDef, impl);
  await app.start();
  return { app, impl, lines: log.lines, httpUrl: `http://127.0.0.1:${app.httpPort}` };
}

/** The error a promise rejects with, as an RpcError. */
async function failure(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(RpcError.is(error)).toBe(true);
  return error as RpcError;
}

/** A service name the provider serves, declaring a method it does not. */
const MissingDef = defineService<{ absent(): Promise<void> }>('test.UserService', {
  version: '1.0.0',
  methods: { absent: {} },
});

const accessLines = (lines: readonly Line[]) => lines.filter((line) => line.message.startsWith('access '));

describe("refer(def, { protocol: 'http' })", () => {
  it('calls the HTTP entry: results, business errors with their fields, codes, deadlines, call ids', async () => {
    const p = await provider();
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http', retries: 0 });
    const overTcp = consumer.refer(UserServiceDef, { url: p.app.address!, retries: 0 });

    // a result with a Date (the tagged JSON format), the same as over the framed protocol
    const user = await users.getUser(7);
    expect(user).toEqual(await overTcp.getUser(7));
    expect(user.createdAt).toBeInstanceOf(Date);
    expect(await users.say('there')).toBe('hello there');

    // a declared business error: code, name, message and fields as over the framed protocol
    const business = await failure(users.withdraw(50));
    const framed = await failure(overTcp.withdraw(50));
    expect(business.code).toBe('ProviderError');
    expect(business.name).toBe('InsufficientFundsError');
    expect(business.message).toBe(new InsufficientFundsError(10, 50).message);
    expect(business.details).toMatchObject({ balance: 10, requested: 50 });
    expect({
      code: business.code,
      name: business.name,
      message: business.message,
      details: business.details,
    }).toEqual({
      code: framed.code,
      name: framed.name,
      message: framed.message,
      details: framed.details,
    });
    expect(business.remote).toBe(true);

    // a one-way call is answered once sent; the provider runs it
    expect(await users.notify('noted')).toBeUndefined();
    await waitFor(() => p.impl.notifications.includes('noted'));

    // an undeclared method
    expect(await codeOf(consumer.refer(MissingDef, { url: p.httpUrl, protocol: 'http' }).absent())).toBe(
      'MethodNotFound',
    );

    // the deadline travels (x-callisto-timeout-ms) and is held here
    const started = Date.now();
    const late = await failure(withOptions(users, { timeoutMs: 300 }).slow(2_500));
    expect(late.code).toBe('Timeout');
    expect(Date.now() - started).toBeLessThan(2_400);
    // the provider had the deadline too: its entry gave up on the call at it (504, handler aborted)

    // cancellation aborts the request
    const controller = new AbortController();
    const cancelled = withOptions(users, { signal: controller.signal }).slow(2_500);
    setTimeout(() => controller.abort(), 50);
    expect(await codeOf(cancelled)).toBe('Cancelled');

    // the provider's access log names the consumer's call id
    const seen: string[] = [];
    const traced = await testApp({
      filters: {
        consumer: [
          {
            name: 'see-call-id',
            position: 'attempt',
            start: (invocation: { callId?: string }) => {
              if (invocation.callId) seen.push(invocation.callId);
            },
          } as never,
        ],
      },
    });
    await traced.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http' }).say('ids');
    expect(seen).toHaveLength(1);
    const sayLines = accessLines(p.lines).filter((line) => /say/.test(line.message));
    expect(sayLines.at(-1)?.fields?.callId).toBe(seen[0]);
  });

  it('sends what the entry reads: path, JSON body, version, group, deadline, credentials, attachments', async () => {
    const seen: { url?: string; headers?: http.IncomingHttpHeaders; body?: string } = {};
    const recorder = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        Object.assign(seen, {
          url: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        });
        response.writeHead(200, {
          'content-type': 'application/json',
          'x-callisto-attachment-served-by': 'rec',
        });
        response.end('"recorded"');
      });
    });
    servers.push(recorder);
    await new Promise<void>((done) => recorder.listen(0, '127.0.0.1', done));
    const GroupedDef = defineService<{ put(when: Date, n: bigint): Promise<string> }>('test.Grouped', {
      version: '2.1.0',
      group: 'blue',
      methods: { put: {} },
    });
    const consumer = await testApp({ consumer: { credentials: 'secret-token' } as AppOptions['consumer'] });
    const ref = consumer.refer(GroupedDef, {
      url: `127.0.0.1:${(recorder.address() as AddressInfo).port}`,
      protocol: 'http',
      attachments: { Tenant: 'acme' },
    });
    expect(await withOptions(ref, { timeoutMs: 4_000 }).put(new Date(5), 12n)).toBe('recorded');
    expect(seen.url).toBe('/test.Grouped/put');
    expect(JSON.parse(seen.body!)).toEqual([
      { $t: 'D', v: 5 },
      { $t: 'n', v: '12' },
    ]);
    const headers = seen.headers!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-callisto-version']).toBe('2.1.0');
    expect(headers['x-callisto-group']).toBe('blue');
    const budget = Number(headers['x-callisto-timeout-ms']);
    expect(budget).toBeGreaterThan(0);
    expect(budget).toBeLessThanOrEqual(4_000);
    expect(headers.authorization).toBe('Bearer secret-token');
    expect(headers['x-callisto-attachment-tenant']).toBe('acme');
    expect(headers['callisto-call-id']).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
  });

  it('sends the consumer’s credentials; refused Unauthorized without them', async () => {
    const token = 'a-long-enough-shared-secret-for-orders';
    const p = await provider({ auth: { tokens: { orders: token }, defaultAccess: 'allow' } });
    const anonymous = await testApp();
    expect(
      await codeOf(
        anonymous.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http', retries: 0 }).say('x'),
      ),
    ).toBe('Unauthorized');
    const orders = await testApp({ consumer: { credentials: token } as AppOptions['consumer'] });
    expect(await orders.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http' }).say('x')).toBe('hello x');
  });

  it('finds the HTTP entry in the registry record; skips providers without it, and vice versa', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-httpref-'));
    dirs.push(dir);
    const registry = [`file://${dir}`];
    const both = await provider({}, { registry });
    const HttpOnly = defineService<{ say(text: string): Promise<string> }>('test.HttpOnly', {
      methods: { say: {} },
    });
    const RpcOnly = defineService<{ say(text: string): Promise<string> }>('test.RpcOnly', {
      methods: { say: {} },
    });
    const other = await testApp({ registry, server: { port: 0, http: { port: 0 } } as AppOptions['server'] });
    other.provide(HttpOnly, { say: async (t) => `http ${t}` }, { protocols: ['http'] });
    other.provide(RpcOnly, { say: async (t) => `rpc ${t}` }, { protocols: ['callisto'] });
    await other.start();

    const consumer = await testApp({ registry });
    const users = consumer.refer(UserServiceDef, { protocol: 'http' });
    expect(await users.say('found')).toBe('hello found');
    const addresses = [...appInternals(consumer).consumer.directories().values()].flatMap((directory) =>
      directory.list().map((endpoint) => endpoint.address),
    );
    expect(addresses).toContain(both.httpUrl);
    expect(addresses).not.toContain(both.app.address);

    expect(await consumer.refer(HttpOnly, { protocol: 'http' }).say('a')).toBe('http a');
    expect(await codeOf(consumer.refer(RpcOnly, { protocol: 'http', retries: 0 }).say('b'))).toBe(
      'NoProvider',
    );
    expect(await consumer.refer(RpcOnly).say('c')).toBe('rpc c');
    expect(await codeOf(consumer.refer(HttpOnly, { retries: 0 }).say('d'))).toBe('NoProvider');

    // a provider with no HTTP entry at all is not an HTTP provider
    const tcpOnly = await testApp({ registry, server: { port: 0 } as AppOptions['server'] });
    const Plain = defineService<{ say(text: string): Promise<string> }>('test.Plain', {
      methods: { say: {} },
    });
    tcpOnly.provide(Plain, { say: async (t) => `plain ${t}` });
    await tcpOnly.start();
    expect(await consumer.refer(Plain).say('e')).toBe('plain e');
    expect(await codeOf(consumer.refer(Plain, { protocol: 'http', retries: 0 }).say('f'))).toBe('NoProvider');
  });

  it('fails over from a provider it cannot reach (never sent), even for a non-idempotent method', async () => {
    const p = await provider();
    const closed = http.createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, {
      url: [`127.0.0.1:${deadPort}`, p.httpUrl],
      protocol: 'http',
      retries: 2,
      loadbalance: 'roundrobin',
    });
    for (let i = 0; i < 4; i++) expect(await users.register(`name${i}`, i)).toBe(`name${i}:${i}`);
  });

  it('holds the deadline itself when the provider ignores it (a server that never answers)', async () => {
    const silent = http.createServer((request) => request.resume());
    servers.push(silent);
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, {
      url: `127.0.0.1:${(silent.address() as AddressInfo).port}`,
      protocol: 'http',
      retries: 0,
    });
    const started = Date.now();
    const late = await failure(withOptions(users, { timeoutMs: 200 }).register('ann', 3));
    expect(late.code).toBe('Timeout');
    expect(late.message).toMatch(/timed out waiting for http:\/\/127\.0\.0\.1:/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('does not repeat a non-idempotent call whose request was sent; repeats an idempotent one', async () => {
    let hits = 0;
    const cutting = http.createServer((request) => {
      hits++;
      // the request arrived: the connection is cut before any answer
      request.resume();
      request.on('end', () => request.socket.destroy());
    });
    servers.push(cutting);
    await new Promise<void>((done) => cutting.listen(0, '127.0.0.1', done));
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, {
      url: `127.0.0.1:${(cutting.address() as AddressInfo).port}`,
      protocol: 'http',
      retries: 2,
    });
    const cut = await failure(users.register('ann', 3));
    expect(cut.code).toBe('Network');
    expect(cut.neverSent).toBe(false);
    expect(hits).toBe(1);
    hits = 0;
    expect(await codeOf(users.say('again'))).toBe('Network');
    expect(hits).toBe(3);
  });

  it('refuses an answer larger than the consumer’s limit (server.maxFrameBytes), declared or streamed', async () => {
    const big = 'x'.repeat(8_192);
    const hostile = http.createServer((request, response) => {
      request.resume();
      if (request.url?.endsWith('/getUser')) {
        // a declared length over the limit
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': 1_000_000 });
        response.write(`"${big}`);
        return;
      }
      // chunked, without end: the consumer must stop reading at the limit
      response.writeHead(200, { 'content-type': 'application/json' });
      const more = () => {
        if (response.destroyed) return;
        response.write(big, () => setImmediate(more));
      };
      response.write('"');
      more();
    });
    servers.push(hostile);
    await new Promise<void>((done) => hostile.listen(0, '127.0.0.1', done));
    const url = `127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    const consumer = await testApp({ server: { maxFrameBytes: 65_536 } as AppOptions['server'] });
    const users = consumer.refer(UserServiceDef, { url, protocol: 'http', retries: 0 });
    const declared = await failure(users.getUser(1));
    expect(declared.message).toMatch(
      /larger than the consumer's limit of 65536 bytes[\s\S]*content-length 1000000/,
    );
    const streamed = await failure(users.say('x'));
    expect(streamed.message).toMatch(/larger than the consumer's limit of 65536 bytes/);

    // a real provider's answer within and over the limit
    const p = await provider();
    const near = consumer.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http', retries: 0 });
    expect(await near.say('y'.repeat(60_000))).toHaveLength(60_006);
    expect((await failure(near.say('y'.repeat(70_000)))).message).toMatch(/larger than the consumer's limit/);
  });

  it('calls an HTTPS entry, verified with consumer.tls; refuses without it, naming the key', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-httpsref-'));
    dirs.push(dir);
    const registry = [`file://${dir}`];
    const p = await provider({ tls: { key: pki.server.key, cert: pki.server.cert } }, { registry });
    const withCa = await testApp({ registry, consumer: { tls: { ca: pki.ca } } as AppOptions['consumer'] });
    const url = `https://localhost:${p.app.httpPort}`;
    expect(await withCa.refer(UserServiceDef, { url, protocol: 'http' }).say('secure')).toBe('hello secure');
    // found in the registry: the record of a TLS provider means HTTPS on its HTTP port
    expect(await withCa.refer(UserServiceDef, { protocol: 'http' }).say('found')).toBe('hello found');
    const without = await testApp();
    const refused = await failure(
      without.refer(UserServiceDef, { url, protocol: 'http', retries: 0 }).say('no'),
    );
    expect(refused.message).toMatch(/consumer\.tls/);
  });

  it('leaves no socket or timer behind once the consumer closes', async () => {
    const p = await provider();
    const before = resourceCounts();
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: p.httpUrl, protocol: 'http', retries: 0 });
    await Promise.all([users.say('a'), users.say('b'), users.getUser(1)]);
    expect(await codeOf(withOptions(users, { timeoutMs: 100 }).slow(400))).toBe('Timeout');
    // the consumer's sockets (and so the provider's ends of them) and timers are gone, the provider running
    await consumer.close();
    await waitFor(() => {
      const after = resourceCounts();
      return (
        (after.TCPSocketWrap ?? 0) <= (before.TCPSocketWrap ?? 0) &&
        (after.TCPServerWrap ?? 0) <= (before.TCPServerWrap ?? 0) &&
        (after.Timeout ?? 0) <= (before.Timeout ?? 0)
      );
    });
  });

  it('refuses direct RPC addresses with protocol http, and unknown protocols, naming the key', async () => {
    const consumer = await testApp();
    expect(() => consumer.refer(UserServiceDef, { url: 'tls://127.0.0.1:1', protocol: 'http' })).toThrow(
      /refer\(test\.UserService\)\.url[\s\S]*http:\/\/host:port/,
    );
    expect(() => consumer.refer(UserServiceDef, { url: '127.0.0.1:1', protocol: 'thrift' as never })).toThrow(
      /protocol[\s\S]*'callisto', 'http', 'grpc'/,
    );
  });
});

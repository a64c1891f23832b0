/**
 * The provider's HTTP/JSON entry over real sockets: calls with a JSON array, answers in the json
 * serializer's tagged format, attachments both ways, version and group, declared methods only, errors as
 * JSON with their code and status, the provider's filters (the app's, the service's) on the HTTP path,
 * its limits shared with TCP, and the record advertising the HTTP port.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineFilter, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { httpPort, httpProvider, post, UserServiceDef, userService } from './support.js';

afterEach(closeAll);

describe('HTTP/JSON entry', () => {
  it('calls a method with a JSON array and answers in the tagged format', async () => {
    const { base } = await httpProvider();
    const answer = await post(`${base}/example.UserService/getUser`, '[7]');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.json).toEqual({
      id: 7,
      name: 'user-7',
      born: { $t: 'D', v: 0 },
      balance: { $t: 'n', v: '100000000000000000000' },
    });
  });

  it('answers 204 for a method that returns nothing, and takes an empty body as no arguments', async () => {
    const { base } = await httpProvider();
    expect((await post(`${base}/example.UserService/rename`, '[1, "Ann"]')).status).toBe(204);
    const empty = await post(`${base}/example.UserService/whoami`, undefined);
    expect(empty.status).toBe(200);
  });

  it('passes attachments from headers and sends response attachments back as headers', async () => {
    const { base } = await httpProvider();
    const answer = await post(`${base}/example.UserService/whoami`, '[]', {
      'x-callisto-attachment-trace-id': 'abc',
      'x-callisto-attachment-tenant': 't1',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ 'trace-id': 'abc', tenant: 't1' });
    expect(answer.headers.get('x-callisto-attachment-served-by')).toBe('http-test');
  });

  it('never hands a handler a forwarded client address sent over HTTP (only a trusted gateway may name one, over RPC)', async () => {
    const { base } = await httpProvider();
    const answer = await post(`${base}/example.UserService/whoami`, '[]', {
      'x-callisto-attachment-callisto-forwarded-client': '10.9.9.9:1',
      'x-callisto-attachment-tenant': 't1',
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ tenant: 't1' });
  });

  it('finds the service by version and group, from headers or the query', async () => {
    const { app, base } = await httpProvider();
    const v2 = { ...UserServiceDef, version: '2.0.0' } as typeof UserServiceDef;
    const blue = { ...UserServiceDef, group: 'blue' } as typeof UserServiceDef;
    app.provide(v2, { ...userService, getUser: async (id: number) => ({ id, v: 2 }) as never });
    app.provide(blue, { ...userService, getUser: async (id: number) => ({ id, g: 'blue' }) as never });
    // two versions now: naming none is refused, naming one picks it
    const ambiguous = await post(`${base}/example.UserService/getUser`, '[1]');
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.json).toMatchObject({ error: { code: 'BadRequest' } });
    expect((ambiguous.json as { error: { message: string } }).error.message).toContain('1.0.0, 2.0.0');
    const two = await post(`${base}/example.UserService/getUser`, '[1]', { 'x-callisto-version': '2.0.0' });
    expect(two.json).toEqual({ id: 1, v: 2 });
    const byQuery = await post(`${base}/example.UserService/getUser?version=2.0.0`, '[1]');
    expect(byQuery.json).toEqual({ id: 1, v: 2 });
    const grouped = await post(`${base}/example.UserService/getUser`, '[1]', { 'x-callisto-group': 'blue' });
    expect(grouped.json).toEqual({ id: 1, g: 'blue' });
    const missing = await post(`${base}/example.UserService/getUser`, '[1]', { 'x-callisto-version': '9' });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { code: 'ServiceNotFound' } });
  });

  it('calls declared methods only', async () => {
    const { base } = await httpProvider();
    for (const name of ['secret', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const answer = await post(`${base}/example.UserService/${name}`, '[]');
      expect(answer.status, name).toBe(404);
      expect(answer.json, name).toMatchObject({ error: { code: 'MethodNotFound' } });
    }
    const unknown = await post(`${base}/example.Nothing/getUser`, '[]');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: 'ServiceNotFound' } });
  });

  it('answers errors as JSON with their code and a fitting status', async () => {
    const { base } = await httpProvider();
    const rpc = await post(`${base}/example.UserService/fail`, '["rpc"]');
    expect(rpc.status).toBe(401);
    expect(rpc.json).toMatchObject({ error: { code: 'Unauthorized', message: 'no entry' } });
    const thrown = await post(`${base}/example.UserService/fail`, '["plain"]');
    expect(thrown.status).toBe(500);
    expect(thrown.json).toMatchObject({
      error: { code: 'ProviderError', name: 'Error', message: 'it broke' },
    });
  });

  it("honours the caller's timeout header", async () => {
    const { base } = await httpProvider();
    const answer = await post(`${base}/example.UserService/slow`, '[10000]', {
      'x-callisto-timeout-ms': '50',
    });
    expect(answer.status).toBe(504);
    expect(answer.json).toMatchObject({ error: { code: 'Timeout' } });
  });

  it('clamps a timeout header past the longest timer (2^31 - 1 ms) instead of timing out at once', async () => {
    const { base } = await httpProvider();
    for (const timeout of ['2147483648', '9999999999', '99999999999999']) {
      const answer = await post(`${base}/example.UserService/slow`, '[30]', {
        'x-callisto-timeout-ms': timeout,
      });
      expect(answer.status, timeout).toBe(200);
      expect(answer.json).toBe('done');
    }
    const bad = await post(`${base}/example.UserService/slow`, '[30]', { 'x-callisto-timeout-ms': '1e9' });
    expect(bad.status).toBe(400);
  });

  it("runs the provider's filters: the app's and the service's, in order, and a refusal stops the call", async () => {
    const seen: string[] = [];
    const gate = defineFilter({
      name: 'gate',
      position: 'provider',
      order: 250,
      start(invocation) {
        seen.push(`gate ${invocation.method} ${invocation.attachments['token'] ?? '-'}`);
        if (invocation.attachments['token'] !== 'open') throw new RpcError('Unauthorized', 'token required');
      },
    });
    const app = await testApp({ server: { http: { port: 0 } }, filters: { provider: [gate] } });
    app.provide(UserServiceDef, userService, {
      filters: [
        defineFilter({
          name: 'audit',
          position: 'provider',
          start(invocation) {
            seen.push(`audit ${invocation.method} ${JSON.stringify(invocation.args)}`);
          },
        }),
      ],
    });
    await app.start();
    const base = `http://127.0.0.1:${httpPort(app)}`;
    const refused = await post(`${base}/example.UserService/getUser`, '[3]');
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: 'Unauthorized', message: 'token required' } });
    const allowed = await post(`${base}/example.UserService/getUser`, '[3]', {
      'x-callisto-attachment-token': 'open',
    });
    expect(allowed.status).toBe(200);
    expect(seen).toEqual(['gate getUser -', 'gate getUser open', 'audit getUser [3]']);
  });

  it("shares the provider's concurrency limit with calls over TCP", async () => {
    const { app, base } = await httpProvider({
      server: { maxConcurrentCalls: 1, connectionShare: 1, addressShare: 1 },
    });
    const users = app.refer(UserServiceDef, {
      injvm: false,
      url: `127.0.0.1:${app.port}`,
      timeoutMs: 10_000,
    });
    const holding = users.slow(300);
    // the TCP call holds the one slot: the HTTP call is refused Overloaded (503)
    const { waitFor } = await import('../support/wait-for.js');
    const overloaded = await waitFor(async () => {
      const answer = await post(`${base}/example.UserService/getUser`, '[1]');
      return answer.status === 503 ? answer : undefined;
    });
    expect(overloaded.json).toMatchObject({ error: { code: 'Overloaded' } });
    expect(await holding).toBe('done');
    expect((await post(`${base}/example.UserService/getUser`, '[1]')).status).toBe(200);
  });

  it('advertises the HTTP port in the provider record', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-http-'));
    try {
      const { app } = await httpProvider({ registry: [`file://${dir}`] });
      expect(app.httpPort).toBeGreaterThan(0);
      const files = fs.readdirSync(dir, { recursive: true }).map(String);
      const recordFile = files.find((file) => file.includes('providers') && file.endsWith('.json'));
      const text = recordFile
        ? fs.readFileSync(path.join(dir, recordFile), 'utf8')
        : JSON.stringify(files.map((f) => f));
      expect(text).toContain(`"http":{"port":${app.httpPort}}`);
    } finally {
      await closeAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on close: a call in flight is answered, new connections are not taken', async () => {
    const app = await testApp({ server: { http: { port: 0 } } });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let finish!: (value: string) => void;
    app.provide(UserServiceDef, {
      ...userService,
      slow: () => {
        started();
        return new Promise<string>((resolve) => {
          finish = resolve;
        });
      },
    });
    await app.start();
    const base = `http://127.0.0.1:${httpPort(app)}`;
    const inFlight = post(`${base}/example.UserService/slow`, '[0]');
    await running;
    const closing = app.close();
    // no new connection is taken once the provider shuts down
    await waitFor(
      async () =>
        (await post(`${base}/example.UserService/getUser`, '[1]').catch(() => 'refused')) === 'refused',
    );
    finish('done');
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(answered.json).toBe('done');
    expect(answered.headers.get('connection')).toBe('close');
    await closing;
  });

  it('serves no HTTP unless configured, and refuses a bad port at start', async () => {
    const app = await testApp();
    app.provide(UserServiceDef, userService);
    await app.start();
    expect(app.httpPort).toBeUndefined();
    await expect(testApp({ server: { http: { port: 70000 } } })).rejects.toThrow(/server\.http\.port/);
  });
});

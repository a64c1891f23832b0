/**
 * Bad input on the HTTP entry, over real sockets: each gets a JSON error with its status and code, and
 * nothing else is affected (a good call on another connection is answered meanwhile and afterwards).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, defineFilter } from '../../src/index.js';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { httpPort, httpProvider, post, rawExchange } from './support.js';

afterEach(closeAll);

const LIMITS = {
  maxDecodedElements: 1_000,
  server: { http: { port: 0, maxBodyBytes: 4_096, headersTimeoutMs: 300, bodyTimeoutMs: 300 } },
} as unknown as AppOptions;

async function provider() {
  const started = await httpProvider(LIMITS);
  const good = async () => {
    const answer = await post(`${started.base}/example.UserService/getUser`, '[1]');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 1 });
  };
  return { ...started, port: httpPort(started.app), good };
}

const errorOf = (json: unknown) => (json as { error: { code: string; message: string } }).error;

describe('HTTP entry: bad input', () => {
  it.each([
    ['a body that is not JSON', '{not json', 400, 'Serialization'],
    ['arguments that are not an array', '{"id":1}', 400, 'BadRequest'],
    ['a bare number', '7', 400, 'BadRequest'],
    ['an own __proto__ key', '[{"__proto__":{"admin":true}}]', 400, 'Serialization'],
    ['a nested __proto__ key', '[{"a":[{"b":{"__proto__":{"x":1}}}]}]', 400, 'Serialization'],
  ])('%s', async (_, body, status, code) => {
    const { base, good } = await provider();
    const answer = await post(`${base}/example.UserService/getUser`, body);
    expect(answer.status).toBe(status);
    expect(errorOf(answer.json).code).toBe(code);
    await good();
  });

  it('more elements than maxDecodedElements: refused before JSON.parse builds them', async () => {
    const { base, good } = await provider();
    const body = `[[${new Array(2_000).fill('0').join(',')}]]`; // 4 KB, 2002 elements
    const answer = await post(`${base}/example.UserService/getUser`, body);
    expect(answer.status).toBe(400);
    expect(errorOf(answer.json)).toMatchObject({ code: 'Serialization' });
    expect(errorOf(answer.json).message).toContain('maxDecodedElements');
    await good();
  });

  it('nesting deeper than the scanners allow', async () => {
    const { base } = await httpProvider();
    const body = `${'['.repeat(1_500)}${']'.repeat(1_500)}`;
    const answer = await post(`${base}/example.UserService/getUser`, body);
    expect(answer.status).toBe(400);
    expect(errorOf(answer.json).message).toMatch(/deeper than 1000/);
    expect((await post(`${base}/example.UserService/getUser`, '[1]')).status).toBe(200);
  });

  it('a declared length over maxBodyBytes: 413 before the body is read, and the connection closed', async () => {
    const { port, good } = await provider();
    const answer = await rawExchange(port, (socket) =>
      socket.write(
        'POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n[',
      ),
    );
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body)).toMatchObject({ code: 'BadRequest' });
    expect(errorOf(answer.body).message).toContain('maxBodyBytes');
    await good();
  });

  it('a chunked body that grows past maxBodyBytes: 413 as it passes, the rest not read', async () => {
    const { port, good } = await provider();
    let written = 0;
    const answer = await rawExchange(port, (socket) => {
      socket.write(
        'POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
      );
      const chunk = `400\r\n${'1,'.repeat(512)}\r\n`; // 1 KiB per chunk
      const pump = (): void => {
        // keeps sending (bounded) until the server answers and closes
        while (written < 64 && socket.writable) {
          written++;
          if (!socket.write(chunk)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      socket.write('1\r\n[\r\n');
      pump();
      socket.on('error', () => {});
    });
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body).message).toContain('maxBodyBytes');
    await good();
  });

  it('an HTTP/1.0 request with transfer-encoding: 400 before anything runs, closed, whatever follows it', async () => {
    let started = 0;
    const count = defineFilter({ name: 'count', position: 'provider', start: () => void started++ });
    const { app } = await httpProvider({ ...LIMITS, filters: { provider: [count] } });
    const port = httpPort(app);
    const head =
      'POST /example.UserService/getUser HTTP/1.0\r\nhost: x\r\ncontent-type: application/json\r\n' +
      'transfer-encoding: chunked\r\n\r\n3\r\n[1]\r\n0\r\n\r\n';
    for (const trailing of ['', 'GARBAGE', 'POST / HTTP/1.0\r\n\r\n']) {
      // rawExchange resolves once the server closed the connection
      const answer = await rawExchange(port, (socket) => socket.write(head + trailing));
      expect(answer.status, JSON.stringify(trailing)).toBe(400);
      expect(errorOf(answer.body).message).toMatch(/HTTP\/1\.0 request with transfer-encoding/);
      expect(answer.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    }
    expect(started).toBe(0);
    const good = await post(`http://127.0.0.1:${port}/example.UserService/getUser`, '[1]');
    expect(good.status).toBe(200);
  });

  it('headers that do not arrive within headersTimeoutMs: 408 JSON, closed; others served meanwhile', async () => {
    const { port, good } = await provider();
    let sent = false;
    const pending = rawExchange(port, (socket) => {
      socket.write('POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\n');
      sent = true;
    });
    await waitFor(() => sent);
    await good();
    const answer = await pending;
    expect(answer.status).toBe(408);
    expect(errorOf(answer.body)).toMatchObject({ code: 'Timeout' });
    expect(errorOf(answer.body).message).toContain('headersTimeoutMs');
    await good();
  });

  it('a body that does not arrive within bodyTimeoutMs: 408 JSON, closed; others served meanwhile', async () => {
    const { port, good } = await provider();
    let sent = false;
    const pending = rawExchange(port, (socket) => {
      socket.write(
        'POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n[1',
      );
      sent = true;
    });
    await waitFor(() => sent);
    await good();
    const answer = await pending;
    expect(answer.status).toBe(408);
    expect(errorOf(answer.body)).toMatchObject({ code: 'Timeout' });
    expect(errorOf(answer.body).message).toContain('bodyTimeoutMs');
    await good();
  });

  it.each(['GET', 'PUT', 'DELETE', 'OPTIONS'])('%s: 405 with Allow: POST', async (method) => {
    const { base, good } = await provider();
    const response = await fetch(`${base}/example.UserService/getUser`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(errorOf(await response.json())).toMatchObject({ code: 'BadRequest' });
    await good();
  });

  it('a content type other than JSON: 415', async () => {
    const { base, good } = await provider();
    const answer = await post(`${base}/example.UserService/getUser`, '[1]', { 'content-type': 'text/plain' });
    expect(answer.status).toBe(415);
    await good();
  });

  it.each([
    ['/', 404, 'ServiceNotFound'],
    ['/example.UserService', 404, 'ServiceNotFound'],
    ['/example.UserService/getUser/extra', 404, 'ServiceNotFound'],
    ['/example.Nope/getUser', 404, 'ServiceNotFound'],
    ['/example.UserService/nope', 404, 'MethodNotFound'],
    ['/example.UserService/%E0%A4%A', 404, 'MethodNotFound'],
    ['/%2e%2e/getUser', 404, 'ServiceNotFound'],
  ])('path %s', async (path, status, code) => {
    const { base, good } = await provider();
    const answer = await post(`${base}${path}`, '[1]');
    expect(answer.status).toBe(status);
    expect(errorOf(answer.json).code).toBe(code);
    await good();
  });

  it('a bad timeout header: 400', async () => {
    const { base } = await provider();
    const answer = await post(`${base}/example.UserService/getUser`, '[1]', {
      'x-callisto-timeout-ms': 'soon',
    });
    expect(answer.status).toBe(400);
  });

  it('headers larger than node allows: 431 JSON', async () => {
    const { port, good } = await provider();
    const answer = await rawExchange(port, (socket) =>
      socket.write(
        `POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(answer.status).toBe(431);
    expect(errorOf(answer.body)).toMatchObject({ code: 'BadRequest' });
    await good();
  });

  it('a malformed request line: 400 JSON', async () => {
    const { port, good } = await provider();
    const answer = await rawExchange(port, (socket) => socket.write('HELLO THERE\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ code: 'BadRequest' });
    await good();
  });

  it("HTTP connections count against the provider's connection caps", async () => {
    const { app, base } = await httpProvider({
      server: { maxConnectionsPerAddress: 2, http: { port: 0 } },
    });
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const socket = net.connect(httpPort(app), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        held.push(socket);
      }
      // the third connection from this address is closed as it arrives
      await expect(post(`${base}/example.UserService/getUser`, '[1]')).rejects.toThrow();
    } finally {
      for (const socket of held) socket.destroy();
    }
    await waitFor(async () => (await post(`${base}/example.UserService/getUser`, '[1]')).status === 200);
  });
});

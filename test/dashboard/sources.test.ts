/**
 * What the dashboard reads from providers' admin endpoints, bounded: an answer larger than the cap is
 * refused without being kept, a silent endpoint times out, a refusal names the option to give, and a
 * `/stats` answer of the wrong shape loses only its bad entries. Real HTTP servers on free ports.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminReader, MAX_ADMIN_ANSWER_BYTES, parseStats } from '../../src/dashboard/sources.js';

const servers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<{ host: string; port: number }> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('the admin reader', () => {
  it('refuses an answer past the cap, however it is sent, and stops reading it', async () => {
    let written = 0;
    const admin = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // no length announced: a megabyte at a time, well past the cap, until the reader goes away
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      const more = () => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', more);
        }
        response.end();
      };
      response.on('close', () => {
        written = Number.POSITIVE_INFINITY;
      });
      more();
    });
    const reader = createAdminReader({ token: undefined, timeoutMs: 10_000 });
    await expect(reader.read(admin, '/stats')).rejects.toThrow(
      `answered more than ${MAX_ADMIN_ANSWER_BYTES} bytes`,
    );
  });

  it('reads an answer within the cap', async () => {
    const admin = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ methods: [], padding: 'x'.repeat(MAX_ADMIN_ANSWER_BYTES / 2) }));
    });
    const reader = createAdminReader({ token: undefined, timeoutMs: 10_000 });
    expect(await reader.read(admin, '/stats')).toMatchObject({ methods: [] });
  });

  it('gives up on a silent endpoint after its timeout', async () => {
    const admin = await serve(() => {}); // never answers
    const reader = createAdminReader({ token: undefined, timeoutMs: 200 });
    await expect(reader.read(admin, '/stats')).rejects.toThrow(/no answer within 200 ms/);
  });

  it('sends the admin token, and says which option to give when refused', async () => {
    const admin = await serve((request, response) => {
      const ok = request.headers.authorization === 'Bearer admin-secret';
      response.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      response.end(ok ? '{"methods":[]}' : '{"error":"token"}');
    });
    await expect(
      createAdminReader({ token: undefined, timeoutMs: 2_000 }).read(admin, '/stats'),
    ).rejects.toThrow(/refused the dashboard \(401\): give --admin-token/);
    expect(
      await createAdminReader({ token: 'admin-secret', timeoutMs: 2_000 }).read(admin, '/stats'),
    ).toEqual({
      methods: [],
    });
  });

  it('keeps the good entries of a /stats answer and drops the rest', () => {
    const stats = parseStats({
      time: 5,
      methods: [
        null,
        'x',
        { service: 's', method: 7 },
        {
          side: 'provider',
          service: 's',
          version: '1.0.0',
          group: '',
          method: 'm',
          calls: '12',
          failures: 1,
          inFlight: -0,
          latencyMs: { p50: 'fast', p99: 2 },
          lastFailure: { time: 4, code: 'Timeout', message: 'x'.repeat(5000) },
        },
      ],
    });
    expect(stats.methods).toHaveLength(1);
    expect(stats.methods[0]).toMatchObject({ calls: 0, failures: 1, latencyMs: { p50: 0, p99: 2 } });
    expect(stats.methods[0]!.lastFailure!.message).toHaveLength(1000);
    expect(() => parseStats({ methods: 'all' })).toThrow('the /stats answer has no "methods" list');
  });
});

/**
 * Hostile clients against the HTTP gateway: idle connections from one address must not shut out the
 * others (a per-address cap), and the providers behind it must keep their per-address limits per HTTP
 * client: the gateway forwards each call's client address, which a provider honours only from the
 * gateways it trusts (`server.trustedGateways`); a client cannot forge it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, createGateway, type Gateway, type GatewayOptions } from '../../src/index.js';
import { UserServiceDef, userService } from '../http/support.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { holdConnections, releaseConnections, request } from './support/http-peers.js';

const gateways: Gateway[] = [];
const dirs: string[] = [];
afterEach(async () => {
  releaseConnections();
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A provider of example.UserService on a file registry, and a gateway in front of it. */
async function setup(server: AppOptions['server'] = {}, gatewayOptions: Partial<GatewayOptions> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-gw-hostile-'));
  dirs.push(dir);
  const registry = `file://${dir}`;
  let executing = 0;
  const provider = await testApp({ application: 'users', registry: [registry], server });
  provider.provide(UserServiceDef, {
    ...userService,
    slow: async (ms: number) => {
      executing++;
      try {
        return await userService.slow(ms);
      } finally {
        executing--;
      }
    },
  });
  await provider.start();
  const gateway = await createGateway({
    registry,
    port: 0,
    ...gatewayOptions,
    app: { logLevel: 'silent', load: { configFile: false, env: false }, consumer: { retries: 0 } },
  });
  gateways.push(gateway);
  return { base: `http://127.0.0.1:${gateway.port}`, executing: () => executing };
}

const call = (
  base: string,
  method: string,
  body: string,
  from: string,
  headers: Record<string, string> = {},
) =>
  request(`${base}/example.UserService/${method}`, {
    method: 'POST',
    body,
    localAddress: from,
    timeoutMs: 10_000,
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('hostile: the HTTP gateway', () => {
  it('caps connections per client address: 96 idle sockets from 127.0.0.2 leave 127.0.0.1 served', async () => {
    const { base } = await setup(
      {},
      { maxConnections: 64, maxConnectionsPerAddress: 8, headersTimeoutMs: 1_000 },
    );
    const port = Number(new URL(base).port);
    const idle = await holdConnections(port, 96, '127.0.0.2');
    const halfOpen = await holdConnections(
      port,
      32,
      '127.0.0.3',
      'POST /example.UserService/getUser HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n[',
    );
    const started = performance.now();
    const answer = await call(base, 'getUser', '[1]', '127.0.0.1');
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(idle.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(8);
    expect(halfOpen.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(8);
  });

  it('forwards the client address: two clients behind one trusted gateway are limited separately, a forged one is replaced', async () => {
    // 4 calls at once, 2 per address; the gateway (127.0.0.1) trusted
    const { base, executing } = await setup({
      maxConcurrentCalls: 4,
      addressShare: 0.5,
      connectionShare: 1,
      trustedGateways: ['127.0.0.1'],
    });
    // client A (127.0.0.2) holds its two places, and claims to be someone else for a third call
    const held = [call(base, 'slow', '[1500]', '127.0.0.2'), call(base, 'slow', '[1500]', '127.0.0.2')];
    await waitFor(() => executing() === 2, 5_000);
    const forged = await call(base, 'slow', '[10]', '127.0.0.2', {
      'x-callisto-attachment-callisto-forwarded-client': '10.1.2.3:4',
    });
    expect(forged.status).toBe(503);
    expect(forged.text).toMatch(/127\.0\.0\.2[^"]* is executing 2 calls, its share/);
    // client B (127.0.0.3) has places of its own
    const b = await Promise.all([
      call(base, 'slow', '[10]', '127.0.0.3'),
      call(base, 'slow', '[10]', '127.0.0.3'),
    ]);
    expect(b.map((answer) => answer.status)).toEqual([200, 200]);
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200]);
  });

  it('a provider that does not trust the gateway ignores the forwarded address and drops it', async () => {
    const { base, executing } = await setup({
      maxConcurrentCalls: 4,
      addressShare: 0.5,
      connectionShare: 1,
      trustedGateways: ['127.0.0.9'],
    });
    const held = [call(base, 'slow', '[1500]', '127.0.0.2'), call(base, 'slow', '[1500]', '127.0.0.2')];
    await waitFor(() => executing() === 2, 5_000);
    // every client behind the untrusted gateway is the gateway's address: B is refused
    const b = await call(base, 'slow', '[10]', '127.0.0.3');
    expect(b.status).toBe(503);
    expect(b.text).toMatch(/127\.0\.0\.1[^"]* is executing 2 calls/);
    await Promise.all(held);
    const whoami = JSON.parse((await call(base, 'whoami', '[]', '127.0.0.2')).text) as Record<string, string>;
    expect(whoami).not.toHaveProperty('callisto-forwarded-client');
  });
});

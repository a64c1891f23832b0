/** The gateway over HTTPS with TLS options of its own (`createGateway({ tls })`), on a file registry. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/index.js';
import { request } from '../hostile/support/http-peers.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { UserServiceDef, userService } from './support.js';

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
const gateways: Gateway[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('HTTP gateway over TLS', () => {
  it('serves HTTPS only with its key and certificate; a key that does not match fails createGateway', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-gw-tls-'));
    dirs.push(dir);
    const registry = `file://${dir}`;
    const provider = await testApp({ registry: [registry] });
    provider.provide(UserServiceDef, userService);
    await provider.start();
    const app = { logLevel: 'silent' as const, load: { configFile: false as const, env: false as const } };
    const gateway = await createGateway({
      registry,
      port: 0,
      tls: { key: pki.server.key, cert: pki.server.cert },
      app,
    });
    gateways.push(gateway);
    const answer = await request(`https://127.0.0.1:${gateway.port}/example.UserService/getUser`, {
      method: 'POST',
      body: '[3]',
      headers: { 'content-type': 'application/json' },
      ca: fs.readFileSync(pki.ca, 'utf8'),
      timeoutMs: 5_000,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ id: 3 });
    await expect(request(`http://127.0.0.1:${gateway.port}/`, { timeoutMs: 1_000 })).rejects.toThrow();
    await expect(
      createGateway({ registry, port: 0, tls: { key: pki.orders.key, cert: pki.server.cert }, app }),
    ).rejects.toThrow(/createGateway\.tls\.key must be the private key/);
  });
});

/**
 * `provide(def, impl, { protocols })` over real sockets: a service served on `callisto` only is refused
 * by the HTTP entry (404, ServiceNotFound) while its RPC calls are answered; one on both answers both;
 * one on `http` only is refused over RPC. The record says which protocols a service is served on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { defineService } from '../../src/index.js';
import { post } from '../http/support.js';
import { closeAll, testApp } from '../support/apps.js';
import { codeOf } from '../support/outcome-code.js';

interface Echo {
  say(text: string): Promise<string>;
}

const RpcOnlyDef = defineService<Echo>('protocols.RpcOnly', { methods: { say: {} } });
const BothDef = defineService<Echo>('protocols.Both', { methods: { say: {} } });
const HttpOnlyDef = defineService<Echo>('protocols.HttpOnly', { methods: { say: {} } });
const impl: Echo = { say: async (text) => `said ${text}` };

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('provide() protocols', () => {
  it('serves each service on the entries it names, and records them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-protocols-'));
    dirs.push(dir);
    const provider = await testApp({ registry: [`file://${dir}`], server: { port: 0, http: { port: 0 } } });
    provider
      .provide(RpcOnlyDef, impl, { protocols: ['callisto'] })
      .provide(BothDef, impl)
      .provide(HttpOnlyDef, impl, { protocols: ['http'] });
    await provider.start();
    const base = `http://127.0.0.1:${provider.httpPort}`;
    const consumer = await testApp();
    const direct = { url: provider.address!, retries: 0 };

    expect(await consumer.refer(RpcOnlyDef, direct).say('a')).toBe('said a');
    const refused = await post(`${base}/protocols.RpcOnly/say`, '["a"]');
    expect(refused.status).toBe(404);
    expect(refused.json).toMatchObject({ error: { code: 'ServiceNotFound' } });

    expect(await consumer.refer(BothDef, direct).say('b')).toBe('said b');
    const both = await post(`${base}/protocols.Both/say`, '["b"]');
    expect(both.status).toBe(200);
    expect(both.json).toBe('said b');

    expect(await codeOf(consumer.refer(HttpOnlyDef, direct).say('c'))).toBe('ServiceNotFound');
    expect((await post(`${base}/protocols.HttpOnly/say`, '["c"]')).status).toBe(200);

    const records = appInternals(provider).provider.records();
    const protocolsOf = (service: string) => records.find((r) => r.service === service)?.protocols;
    expect(protocolsOf('protocols.RpcOnly')).toEqual(['callisto']);
    expect(protocolsOf('protocols.Both')).toEqual(['callisto', 'http', 'grpc']);
    expect(protocolsOf('protocols.HttpOnly')).toEqual(['http']);
  });

  it('refuses an unknown protocol, and http on an app without server.http, naming the key, when provided', async () => {
    const app = await testApp({ server: { port: 0 } });
    expect(() => app.provide(RpcOnlyDef, impl, { protocols: ['dubbo' as never] })).toThrow(
      /protocols\[0\][\s\S]*dubbo/,
    );
    expect(() => app.provide(HttpOnlyDef, impl, { protocols: ['http'] })).toThrow(
      /protocols[\s\S]*server\.http/,
    );
  });
});

/**
 * `refer(def, { protocol })`: `callisto` (the default) calls over the provider's RPC port (`http`, the
 * HTTP entry: test/http/http-reference.test.ts); anything else names the choices. A
 * provider record that lists its protocols without `callisto` is skipped by the consumer's directory
 * (a record without a list serves every protocol).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDirectory } from '../../src/consumer/directory.js';
import { fixedFeed } from '../../src/consumer/directory-feed.js';
import { directProviderRecord } from '../../src/registry/direct-registry.js';
import type { ProviderRecord } from '../../src/registry/provider-record.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

describe('refer(def, { protocol })', () => {
  it("calls over Callisto's protocol with 'callisto' (and by default)", async () => {
    const provider = await testApp({ application: 'p0' });
    provider.provide(FlakyDef, new FlakyImpl('p0'));
    await provider.start();
    const consumer = await testApp({ application: 'consumer' });
    expect(await consumer.refer(FlakyDef, { url: provider.address!, protocol: 'callisto' }).read('x')).toBe(
      'p0:x',
    );
    expect(await consumer.refer(FlakyDef, { url: provider.address! }).read('y')).toBe('p0:y');
  });

  it('refuses an unknown protocol with a ConfigError naming the key and the choices', async () => {
    const consumer = await testApp({ application: 'consumer' });
    expect(() => consumer.refer(FlakyDef, { url: '127.0.0.1:1', protocol: 'thrift' as never })).toThrow(
      /refer\(test\.Flaky\)\.protocol[\s\S]*'callisto', 'http', 'grpc'/,
    );
  });

  it('skips providers whose record lists protocols without callisto', async () => {
    const record = (port: number, protocols?: string[]): ProviderRecord => ({
      ...directProviderRecord(FlakyDef, `127.0.0.1:${port}`),
      ...(protocols === undefined ? {} : { protocols }),
    });
    const directory = createDirectory({
      key: FlakyDef,
      feed: fixedFeed([record(1001, ['http']), record(1002, ['callisto', 'http']), record(1003)]),
      link: () => ({ available: true, connection: () => ({ send() {} }) }),
    });
    await directory.ready;
    expect(directory.list().map((endpoint) => endpoint.port)).toEqual([1002, 1003]);
    await directory.close();
  });

  it("takes records at their HTTP port for 'http', skipping those without one or not serving http", async () => {
    const record = (port: number, extra: Partial<ProviderRecord>): ProviderRecord => ({
      ...directProviderRecord(FlakyDef, `127.0.0.1:${port}`),
      ...extra,
    });
    const directory = createDirectory({
      key: FlakyDef,
      protocol: 'http',
      feed: fixedFeed([
        record(1001, { http: { port: 2001 }, protocols: ['callisto'] }),
        record(1002, { http: { port: 2002 }, protocols: ['callisto', 'http'] }),
        record(1003, {}),
        record(1004, { http: { port: 2004 }, transport: 'tls' }),
        record(1005, { http: { port: 2005 } }),
      ]),
      link: () => ({ available: true, connection: () => ({ send() {} }) }),
    });
    await directory.ready;
    expect(directory.list().map((endpoint) => endpoint.address)).toEqual([
      'http://127.0.0.1:2002',
      'https://127.0.0.1:2004',
      'http://127.0.0.1:2005',
    ]);
    await directory.close();
  });
});

/**
 * Rate and concurrency limits over real sockets (docs/governance.md): the provider's token buckets per
 * method, service, app, consumer application and remote host (RateLimited with a retry-after hint, not
 * failed over unless the reference says so), its `executes`, the consumer's `rate` and `actives`
 * (refused unsent), bad values failing at start with the key, and nothing in the chains when unset.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { methodRuntimeOf } from '../../src/consumer/reference.js';
import { ConfigError, RpcError } from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

/** A limit that does not refill within a test: only the burst counts. */
const burstOnly = (burst: number) => ({ perSecond: 0.001, burst });

async function provider(options: Parameters<typeof testApp>[0] = {}, provide = {}, name = 'p') {
  const impl = new FlakyImpl(name);
  const app = await testApp({ application: name, ...options });
  app.provide(FlakyDef, impl, provide);
  await app.start();
  return { app, impl, url: app.address! };
}

async function failure(call: Promise<unknown>): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!RpcError.is(error)) throw new Error(`expected an RpcError, got ${String(error)}`);
  return error;
}

describe('provider rate limits', () => {
  it("refuses a method's calls over its bucket with RateLimited, naming the limit and the retry-after", async () => {
    const p = await provider({}, { methods: { read: { limits: { rate: burstOnly(3) } } } });
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: p.url });
    for (let i = 0; i < 3; i++) expect(await ref.read('k')).toBe('p:k');
    const refused = await failure(ref.read('k'));
    expect(refused.code).toBe('RateLimited');
    expect(refused.remote).toBe(true);
    expect(refused.message).toMatch(
      /method test\.Flaky\.read: 0\.001 calls\/s \(burst 3\); retry after \d+ ms/,
    );
    expect(refused.details['retryAfterMs']).toBeGreaterThan(0);
    expect(p.impl.reads).toBe(3);
    // other methods are not limited
    for (let i = 0; i < 5; i++) expect(await ref.write(String(i))).toBe(`p:${i}`);
  });

  it('a service limit is shared by its methods; an app limit (server.limits) by its services', async () => {
    const p = await provider({}, { limits: { rate: burstOnly(2) } });
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: p.url });
    await ref.read('a');
    await ref.write('b');
    expect((await failure(ref.read('c'))).message).toMatch(/service test\.Flaky: /);

    const q = await provider({ server: { limits: { rate: burstOnly(2) } } });
    const refQ = consumer.refer(FlakyDef, { url: q.url });
    await refQ.read('a');
    await refQ.write('b');
    expect((await failure(refQ.write('c'))).message).toMatch(/rate limited by app: /);
  });

  it('refills: a refused caller gets through after the retry-after', async () => {
    const p = await provider({}, { limits: { rate: { perSecond: 20, burst: 1 } } });
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: p.url });
    await ref.read('a');
    const refused = await failure(ref.read('b'));
    expect(refused.code).toBe('RateLimited');
    const wait = refused.details['retryAfterMs'] as number;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(50);
    await waitFor(async () => (await ref.read('c').catch(() => undefined)) === 'p:c', 5_000);
  });

  it('per application: each consumer application has its own bucket (named with consumer.sendApplication)', async () => {
    const p = await provider({}, { limits: { perApplication: burstOnly(2) } });
    const shop = await testApp({ application: 'shop', consumer: { sendApplication: true } });
    const bill = await testApp({ application: 'bill', consumer: { sendApplication: true } });
    const shopRef = shop.refer(FlakyDef, { url: p.url });
    const billRef = bill.refer(FlakyDef, { url: p.url });
    await shopRef.read('1');
    await shopRef.read('2');
    const refused = await failure(shopRef.read('3'));
    expect(refused.code).toBe('RateLimited');
    expect(refused.message).toMatch(/per application "shop"/);
    expect(await billRef.read('1')).toBe('p:1');
    expect(await billRef.read('2')).toBe('p:2');
    expect((await failure(billRef.read('3'))).message).toMatch(/per application "bill"/);
    // consumers that name no application share one bucket
    const anonymous = await testApp({ application: 'anon' });
    const anonRef = anonymous.refer(FlakyDef, { url: p.url });
    await anonRef.read('1');
    await anonRef.read('2');
    expect((await failure(anonRef.read('3'))).message).toMatch(/per application "": /);
  });

  it('per address: every caller from one host shares its bucket, whatever its application', async () => {
    const p = await provider({}, { limits: { perAddress: burstOnly(3) } });
    const one = await testApp({ application: 'one', consumer: { sendApplication: true } });
    const two = await testApp({ application: 'two', consumer: { sendApplication: true } });
    await one.refer(FlakyDef, { url: p.url }).read('1');
    await one.refer(FlakyDef, { url: p.url }).read('2');
    const ref = two.refer(FlakyDef, { url: p.url });
    await ref.read('3');
    expect((await failure(ref.read('4'))).message).toMatch(/per address 127\.0\.0\.1: /);
  });

  it('is not failed over by default; failoverOnRateLimited sends the call to another provider', async () => {
    const limited = await provider({}, { limits: { rate: burstOnly(1) } }, 'limited');
    const free = await provider({}, {}, 'free');
    const consumer = await testApp();
    const plain = consumer.refer(FlakyDef, { url: [limited.url, free.url], loadbalance: 'roundrobin' });
    const answers: string[] = [];
    let refused: RpcError | undefined;
    for (let i = 0; i < 4 && refused === undefined; i++) {
      await plain.read(String(i)).then(
        (answer) => answers.push(answer),
        (error: RpcError) => {
          refused = error;
        },
      );
    }
    expect(refused?.code).toBe('RateLimited');

    const failingOver = consumer.refer(FlakyDef, {
      url: [limited.url, free.url],
      loadbalance: 'roundrobin',
      failoverOnRateLimited: true,
    });
    const before = free.impl.reads;
    for (let i = 0; i < 6; i++) expect(await failingOver.read(String(i))).toMatch(/^(limited|free):/);
    expect(free.impl.reads - before).toBe(6);
  });
});

describe('provider executes', () => {
  it('refuses a call beyond the calls executing at once with Overloaded, and frees the slot at the end', async () => {
    const p = await provider({}, { methods: { read: { limits: { executes: 1 } } } });
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: p.url, retries: 0, timeoutMs: 20_000 });
    p.impl.mode = 'hang';
    const held = ref.read('held');
    await waitFor(() => p.impl.reads === 1);
    const refused = await failure(ref.read('second'));
    expect(refused.code).toBe('Overloaded');
    expect(refused.message).toMatch(
      /method test\.Flaky\.read: 1 calls executing at once \(limits\.executes\)/,
    );
    expect(p.impl.reads).toBe(1);
    // other methods are not limited by read's executes
    p.impl.mode = 'ok';
    expect(await ref.write('w')).toBe('p:w');
    p.impl.releaseAll();
    expect(await held).toBe('p:held');
    expect(await ref.read('after')).toBe('p:after');
  });
});

describe('consumer limits', () => {
  it('rate: refuses unsent over the bucket with RateLimited; a method limit is its own', async () => {
    const p = await provider();
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, {
      url: p.url,
      limits: { rate: burstOnly(2) },
      methods: { write: { limits: { rate: burstOnly(1) } } },
    });
    await ref.read('1');
    await ref.write('2');
    const refused = await failure(ref.read('3'));
    expect(refused).toMatchObject({ code: 'RateLimited', neverSent: true, remote: false });
    expect(refused.message).toMatch(/rate limited by the consumer's refer\(test\.Flaky\): /);
    expect(refused.details['retryAfterMs']).toBeGreaterThan(0);
    expect(p.impl.reads).toBe(1);

    const other = consumer.refer(FlakyDef, {
      url: p.url,
      methods: { write: { limits: { rate: burstOnly(1) } } },
    });
    await other.write('a');
    expect((await failure(other.write('b'))).message).toMatch(/refer\(test\.Flaky\)\.methods\.write/);
    expect(await other.read('free')).toBe('p:free');
  });

  it('actives: refuses a call beyond the calls in flight with Overloaded, unsent', async () => {
    const p = await provider();
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: p.url, limits: { actives: 2 }, timeoutMs: 20_000 });
    p.impl.mode = 'hang';
    const held = [ref.read('1'), ref.write('2')];
    await waitFor(() => p.impl.reads === 1 && p.impl.writes.length === 1);
    const refused = await failure(ref.read('3'));
    expect(refused).toMatchObject({ code: 'Overloaded', neverSent: true });
    expect(refused.message).toMatch(/2 calls in flight \(limits\.actives\)/);
    expect(p.impl.reads).toBe(1);
    p.impl.mode = 'ok';
    p.impl.releaseAll();
    await Promise.all(held);
    expect(await ref.read('4')).toBe('p:4');
  });
});

describe('limit configuration', () => {
  it('fails at start, naming the key, on zero or negative values', async () => {
    await expect(testApp({ server: { limits: { rate: { perSecond: 0 } } } })).rejects.toThrow(
      /server\.limits\.rate\.perSecond/,
    );
    await expect(
      testApp({ load: { env: { CALLISTO_SERVER_LIMITS: '{"perAddress":{"perSecond":-1}}' } } }),
    ).rejects.toThrow(
      /server\.limits\.perAddress\.perSecond = -1 \(from environment variable CALLISTO_SERVER_LIMITS\)/,
    );
    const fromEnv = await testApp({ load: { env: { CALLISTO_SERVER_LIMITS: '{"rate":{"perSecond":7}}' } } });
    expect(fromEnv.config.server.limits).toEqual({ rate: { perSecond: 7 } });
    const app = await testApp();
    expect(() =>
      app.provide(FlakyDef, new FlakyImpl('x'), { methods: { read: { limits: { executes: -1 } } } }),
    ).toThrow(ConfigError);
    expect(() =>
      app.provide(FlakyDef, new FlakyImpl('x'), { limits: { perAddress: { perSecond: 5, burst: 0 } } }),
    ).toThrow(/provide\(test\.Flaky\)\.limits\.perAddress\.burst/);
    expect(() => app.refer(FlakyDef, { url: '127.0.0.1:1', limits: { actives: 0 } })).toThrow(
      /refer\(test\.Flaky\)\.limits\.actives/,
    );
    expect(() =>
      app.refer(FlakyDef, { url: '127.0.0.1:1', methods: { read: { limits: { rate: { perSecond: -2 } } } } }),
    ).toThrow(/refer\(test\.Flaky\)\.methods\.read\.limits\.rate\.perSecond/);
  });

  it('puts no limit filter in a chain where no limit is configured', async () => {
    const p = await provider({}, { methods: { read: { limits: { executes: 3 } } } });
    const names = (method: string) => appInternals(p.app).provider.filterNames(FlakyDef, method);
    expect(names('write')).not.toContain('rate-limit');
    expect(names('write')).not.toContain('executes');
    expect(names('read')).toContain('executes');
    expect(names('read')).not.toContain('rate-limit');
    const consumer = await testApp();
    const plain = consumer.refer(FlakyDef, { url: p.url });
    expect(methodRuntimeOf(plain, 'read').filters.call).not.toContain('limit');
    const limited = consumer.refer(FlakyDef, { url: p.url, limits: { actives: 5 } });
    expect(methodRuntimeOf(limited, 'read').filters.call).toContain('limit');
  });
});

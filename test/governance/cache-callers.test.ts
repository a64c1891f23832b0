/**
 * The result cache never crosses callers (docs/governance.md#result-cache), over real sockets with the
 * provider's auth: a BFF calling through one reference with each user's credentials
 * (`withOptions(ref, { credentials })`) gets each user's own answer (shared-secret tokens and JWTs); a
 * method that declares `varyBy: ['tenant']` keeps answers per tenant attachment; `varyBy` is validated
 * where it is declared.
 */
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, callContext, defineService, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

interface Profile {
  me(): Promise<string>;
  settings(): Promise<string>;
}

const CACHE = { ttlMs: 60_000, max: 100 };
const ProfileDef = defineService<Profile>('test.CachedProfile', {
  methods: {
    me: { idempotent: true, cache: CACHE },
    settings: { idempotent: true, cache: { ...CACHE, varyBy: ['tenant'] } },
  },
});

const ALICE = 'alice-0123456789abcdef-secret';
const BOBBY = 'bobby-0123456789abcdef-secret';
const BFF = 'bff-0123456789abcdef-secret-token';
const JWT_SECRET = 'jwt-hmac-secret-0123456789abcdef0123456789';

/** A provider answering per caller (its identity) and per tenant attachment; counts its runs. */
async function provider(server: AppOptions['server']) {
  const runs = { count: 0 };
  const app = await testApp({ server });
  app.provide(ProfileDef, {
    me() {
      runs.count++;
      return `profile of ${callContext()!.identity?.id ?? 'nobody'}`;
    },
    settings() {
      runs.count++;
      const context = callContext()!;
      return `settings of ${context.identity?.id ?? 'nobody'} in ${context.attachments['tenant'] ?? 'no tenant'}`;
    },
  });
  await app.start();
  return { app, runs };
}

const tokens = {
  auth: { tokens: { alice: ALICE, bobby: BOBBY, bff: BFF }, defaultAccess: 'allow' as const },
};

describe('result cache per caller', () => {
  it('alice then bobby through one reference with per-call tokens get their own answers', async () => {
    const { app, runs } = await provider(tokens);
    const bff = await testApp({ consumer: { credentials: BFF, retries: 0 } });
    const ref = bff.refer(ProfileDef, { url: app.address! });
    expect(await withOptions(ref, { credentials: ALICE }).me()).toBe('profile of alice');
    expect(await withOptions(ref, { credentials: BOBBY }).me()).toBe('profile of bobby');
    expect(await ref.me()).toBe('profile of bff');
    expect(runs.count).toBe(3);
    // each caller's answer is kept for that caller (a new view with the same token included)
    expect(await withOptions(ref, { credentials: ALICE }).me()).toBe('profile of alice');
    expect(await withOptions(ref, { credentials: BOBBY }).me()).toBe('profile of bobby');
    expect(await ref.me()).toBe('profile of bff');
    expect(runs.count).toBe(3);
  });

  it('alice then bobby with per-call JWTs get their own answers', async () => {
    const { app, runs } = await provider({ auth: { jwtSecret: JWT_SECRET, defaultAccess: 'allow' } });
    const key = new TextEncoder().encode(JWT_SECRET);
    const sign = (sub: string) =>
      new SignJWT({ sub })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience('test.CachedProfile')
        .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
        .sign(key);
    const bff = await testApp({ consumer: { retries: 0 } });
    const ref = bff.refer(ProfileDef, { url: app.address! });
    const [alice, bobby] = [await sign('alice'), await sign('bobby')];
    expect(await withOptions(ref, { credentials: alice }).me()).toBe('profile of alice');
    expect(await withOptions(ref, { credentials: bobby }).me()).toBe('profile of bobby');
    expect(await withOptions(ref, { credentials: alice }).me()).toBe('profile of alice');
    expect(runs.count).toBe(2);
  });

  it('keeps answers per varyBy attachment (a tenant), and per caller within it', async () => {
    const { app, runs } = await provider(tokens);
    const bff = await testApp({ consumer: { credentials: BFF, retries: 0 } });
    const ref = bff.refer(ProfileDef, { url: app.address! });
    const as = (credentials: string, tenant: string) =>
      withOptions(ref, { credentials, attachments: { tenant } });
    expect(await as(ALICE, 'red').settings()).toBe('settings of alice in red');
    expect(await as(ALICE, 'blue').settings()).toBe('settings of alice in blue');
    expect(await as(BOBBY, 'red').settings()).toBe('settings of bobby in red');
    expect(await withOptions(ref, { attachments: { tenant: 'red' } }).settings()).toBe(
      'settings of bff in red',
    );
    expect(runs.count).toBe(4);
    expect(await as(ALICE, 'blue').settings()).toBe('settings of alice in blue');
    expect(await as(ALICE, 'red').settings()).toBe('settings of alice in red');
    expect(runs.count).toBe(4);
    // an attachment not named in varyBy does not split the cache
    expect(await withOptions(ref, { credentials: ALICE, attachments: { trace: 'x' } }).me()).toBe(
      'profile of alice',
    );
    expect(await withOptions(ref, { credentials: ALICE, attachments: { trace: 'y' } }).me()).toBe(
      'profile of alice',
    );
    expect(runs.count).toBe(5);
  });

  it('refuses a varyBy that is not a list of attachment names, naming the key', () => {
    expect(() =>
      defineService<Profile>('test.BadVary', {
        methods: {
          me: { idempotent: true, cache: { ...CACHE, varyBy: ['ten ant'] } },
          settings: {},
        },
      }),
    ).toThrow(
      /defineService\(test\.BadVary\)\.methods\.me\.cache\.varyBy\[0\] = "ten ant".*expected an attachment name/,
    );
    expect(() =>
      defineService<Profile>('test.BadVary', {
        // @ts-expect-error varyBy is a list of names
        methods: { me: { idempotent: true, cache: { ...CACHE, varyBy: 'tenant' } }, settings: {} },
      }),
    ).toThrow(/varyBy/);
  });
});

/**
 * Compile-time checks: `npm test` typechecks this file with tsc, so each `@ts-expect-error` below must
 * stay an error (a wrong method name or argument type must not compile).
 */
import { describe, expect, it } from 'vitest';
import { defineService, type Implementation, type Remote, withOptions } from '../../src/index.js';
import { type User, type UserService, UserServiceDef } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';

describe('typed references', () => {
  it('expose every method returning a Promise of its declared result, and reject wrong calls at compile time', async () => {
    const app = await testApp();
    const users: Remote<UserService> = app.refer(UserServiceDef, { mock: true });
    const pending: Promise<User> = users.getUser(1);
    await pending;
    // @ts-expect-error: no such method
    expect(() => users.getUserr(1)).toThrow();
    // @ts-expect-error: wrong argument type
    void users.getUser('1');
    // @ts-expect-error: missing argument
    void users.register('ann');
    // @ts-expect-error: per-call options keep the signature
    void withOptions(users, { timeoutMs: 10 }).say(42);
    await closeAll();
  });

  it('accept sync and async implementations, and reject a wrong one at compile time', async () => {
    const sync: Pick<Implementation<UserService>, 'say'> = { say: (m: string) => `hi ${m}` };
    const async: Pick<Implementation<UserService>, 'say'> = { say: async (m: string) => `hi ${m}` };
    // @ts-expect-error: wrong result type
    const wrong: Pick<Implementation<UserService>, 'say'> = { say: (m: string) => m.length };
    void wrong;
    // Both accepted implementations serve calls, and a caller cannot tell them apart.
    const SayDef = defineService<Pick<UserService, 'say'>>('test.Say', { methods: { say: {} } });
    for (const [name, implementation] of [
      ['sync', sync],
      ['async', async],
    ] as const) {
      const app = await testApp();
      app.provide(SayDef, implementation);
      const remote = app.refer(SayDef);
      const answer: Promise<string> = remote.say(name);
      expect(await answer).toBe(`hi ${name}`);
    }
    await closeAll();
  });
});

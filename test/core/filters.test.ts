/**
 * Filters at their positions (docs/filters.md), over real sockets: a per-call filter sees each call
 * once, a per-attempt filter sees each attempt with the provider it went to (failover retries
 * included), a provider filter sees decoded arguments after admission and before validation; filters
 * run in order, hook filters can refuse a call, per-method filters apply to their method only, and a
 * filter that is not configured is not in the chain at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { methodRuntimeOf } from '../../src/consumer/reference.js';
import {
  ConfigError,
  callContext,
  defineFilter,
  defineService,
  type Filter,
  type Invocation,
  RpcError,
} from '../../src/index.js';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyProviders } from '../support/cluster-setup.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const codeOf = (error: unknown) => (error === undefined ? 'ok' : RpcError.from(error).code);

describe('consumer positions', () => {
  it('a per-call filter sees one invocation per call; a per-attempt filter sees each attempt with its provider', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'overloaded'; // refuses before running: failover retries on p1
    const calls: Invocation[] = [];
    const attempts: Array<{ invocation: Invocation; address: string | undefined; outcome: string }> = [];
    const hooked: string[] = [];
    const perCall: Filter = (next) => (invocation) => {
      calls.push(invocation);
      return next(invocation);
    };
    const perAttempt = defineFilter({
      name: 'tap',
      position: 'attempt',
      filter: (next) => async (invocation) => {
        const address = invocation.remoteAddress;
        try {
          const value = await next(invocation);
          attempts.push({ invocation, address, outcome: 'ok' });
          return value;
        } catch (error) {
          attempts.push({ invocation, address, outcome: codeOf(error) });
          throw error;
        }
      },
    });
    const hooks = defineFilter({
      name: 'hooks',
      position: 'attempt',
      order: 600,
      start: (invocation) => hooked.push(`start ${invocation.remoteAddress}`),
      end: (invocation, error) => hooked.push(`end ${invocation.remoteAddress} ${codeOf(error)}`),
    });
    const app = await testApp({ filters: { consumer: [perCall, perAttempt] } });
    const ref = app.refer(FlakyDef, {
      url: providers.map((p) => p.address),
      loadbalance: 'roundrobin',
      outlierDetection: false,
      filters: [hooks],
    });
    expect(await ref.read('k')).toBe('p1:k');
    expect(calls).toHaveLength(1);
    expect(attempts.map(({ address, outcome }) => [address, outcome])).toEqual([
      [providers[0]!.address, 'Overloaded'],
      [providers[1]!.address, 'ok'],
    ]);
    // the attempts are the call's own invocation, tried twice
    expect(attempts.every(({ invocation }) => invocation === calls[0])).toBe(true);
    expect(hooked).toEqual([
      `start ${providers[0]!.address}`,
      `end ${providers[0]!.address} Overloaded`,
      `start ${providers[1]!.address}`,
      `end ${providers[1]!.address} ok`,
    ]);
  });

  it('run the same positions for an in-process call, whose attempt goes to injvm', async () => {
    const seen: string[] = [];
    const app = await testApp({
      filters: {
        consumer: [
          (next) => (invocation) => {
            seen.push(`call ${invocation.method}`);
            return next(invocation);
          },
          defineFilter({
            name: 'tap',
            position: 'attempt',
            start: (invocation) => seen.push(`attempt ${invocation.method}@${invocation.remoteAddress}`),
          }),
        ],
        provider: [
          (next) => (invocation) => {
            seen.push(`provider ${invocation.method}@${invocation.remoteAddress}`);
            return next(invocation);
          },
        ],
      },
    });
    app.provide(UserServiceDef, new UserServiceImpl());
    const users = app.refer(UserServiceDef);
    expect(await users.say('x')).toBe('hello x');
    expect(seen).toEqual(['call say', 'attempt say@injvm', 'provider say@injvm']);
  });

  it('per-method filters apply to their method only, after the reference’s', async () => {
    const providers = await flakyProviders(1);
    const seen: string[] = [];
    const tag =
      (name: string): Filter =>
      (next) =>
      (invocation) => {
        seen.push(`${name}:${invocation.method}`);
        return next(invocation);
      };
    const app = await testApp();
    const ref = app.refer(FlakyDef, {
      url: providers[0]!.address,
      filters: [tag('ref')],
      methods: { read: { filters: [tag('read-only')] } },
    });
    await ref.read('a');
    await ref.write('b');
    expect(seen).toEqual(['ref:read', 'read-only:read', 'ref:write']);
  });

  it('a filter that is not configured is not in the chain', async () => {
    const providers = await flakyProviders(1);
    const app = await testApp();
    const url = providers[0]!.address;
    const plain = app.refer(FlakyDef, { url });
    expect(methodRuntimeOf(plain, 'read').filters).toEqual({
      call: ['metrics-call'],
      attempt: ['deadline', 'observe', 'endpoint-stats', 'outlier', 'metrics-client', 'throttle'],
    });
    const noOutlier = app.refer(FlakyDef, {
      url,
      outlierDetection: false,
      adaptiveThrottling: false,
      mock: 'fail',
    });
    expect(methodRuntimeOf(noOutlier, 'read').filters).toEqual({
      call: ['metrics-call', 'mock'],
      attempt: ['deadline', 'observe', 'endpoint-stats', 'metrics-client'],
    });
    const audit = defineFilter({ name: 'audit', position: 'attempt', order: 350, start() {} });
    const withUser = app.refer(FlakyDef, { url, filters: [audit, (next) => next] });
    expect(methodRuntimeOf(withUser, 'read').filters).toEqual({
      call: ['metrics-call', 'anonymous'],
      attempt: ['deadline', 'observe', 'endpoint-stats', 'audit', 'outlier', 'metrics-client', 'throttle'],
    });
  });
});

describe('the provider position', () => {
  it('sees decoded arguments after admission and before validation, in order, and may refuse a call', async () => {
    const seen: string[] = [];
    const record = (name: string, order?: number) =>
      defineFilter({
        name,
        position: 'provider',
        ...(order === undefined ? {} : { order }),
        filter: (next) => async (invocation) => {
          seen.push(`${name} ${JSON.stringify(invocation.args)}`);
          try {
            return await next(invocation);
          } catch (error) {
            seen.push(`${name} saw ${codeOf(error)}`);
            throw error;
          }
        },
      });
    const gate = defineFilter({
      name: 'gate',
      position: 'provider',
      order: 450,
      start(invocation) {
        if (invocation.attachments.token !== 'secret') throw new RpcError('Unauthorized', 'no token');
      },
    });
    const provider = await testApp({
      filters: { provider: [record('second', 600), record('first')] },
      server: { maxConcurrentCalls: 1, connectionShare: 1, addressShare: 1 },
    });
    const impl = new UserServiceImpl();
    provider.provide(UserServiceDef, impl, { filters: [gate] });
    await provider.start();
    expect(appInternals(provider).provider.filterNames(UserServiceDef, 'register')).toEqual([
      'metrics-server',
      'shutdown',
      'deadline',
      'admission',
      'decode',
      'observe',
      'gate',
      'first',
      'second',
      'validation',
    ]);
    expect(appInternals(provider).provider.filterNames(UserServiceDef, 'say')).not.toContain('validation');
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, {
      url: provider.address!,
      attachments: { token: 'secret' },
      cluster: 'failfast',
    });
    await expect(users.register('x', -1)).rejects.toMatchObject({ code: 'BadRequest' });
    expect(seen).toEqual([
      'first ["x",-1]',
      'second ["x",-1]',
      'second saw BadRequest',
      'first saw BadRequest',
    ]);
    // refused by a filter: the handler never runs, the caller gets the filter's code
    const anonymous = consumer.refer(UserServiceDef, { url: provider.address!, cluster: 'failfast' });
    const before = impl.calls;
    await expect(anonymous.say('x')).rejects.toMatchObject({ code: 'Unauthorized', message: 'no token' });
    expect(impl.calls).toBe(before);
    // refused by admission (one call at most): the user filters never see it
    seen.length = 0;
    const hanging = users.slow(2_000);
    await waitFor(() => appInternals(provider).provider.server!.active === 1);
    await expect(users.say('over')).rejects.toMatchObject({ code: 'Overloaded' });
    expect(seen).toEqual(['first [2000]', 'second [2000]']);
    await hanging;
  });

  it('per-method provider filters apply to their method only', async () => {
    const seen: string[] = [];
    const provider = await testApp();
    provider.provide(UserServiceDef, new UserServiceImpl(), {
      methods: {
        say: {
          filters: [
            (next) => (invocation) => {
              seen.push(`${invocation.method} ${callContext() === undefined}`);
              return next(invocation);
            },
          ],
        },
      },
    });
    await provider.start();
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: provider.address! });
    await users.say('a');
    await users.getUser(1);
    expect(seen).toEqual(['say true']);
  });
});

describe('defineFilter', () => {
  it("keeps waiting filters out from between admission and decode (they share the connection's bytes in one turn)", () => {
    expect(() =>
      defineFilter({ name: 'slow', position: 'provider', order: 320, filter: (next) => next }),
    ).toThrow(/orders between 300 and 350 .* take start\/end hooks only/);
    // hooks may sit there (rate limits do), and wrapping filters anywhere else
    expect(defineFilter({ name: 'quick', position: 'provider', order: 320, start() {} }).order).toBe(320);
    expect(
      defineFilter({ name: 'outer', position: 'provider', order: 300, filter: (next) => next }).order,
    ).toBe(300);
    expect(
      defineFilter({ name: 'inner', position: 'provider', order: 350, filter: (next) => next }).order,
    ).toBe(350);
  });

  it('says what is wrong with a filter, and where a filter of another position was given', async () => {
    expect(() => defineFilter({ name: '', position: 'call', filter: (next) => next })).toThrow(/name/);
    expect(() => defineFilter({ name: 'x', position: 'server' as never, filter: (next) => next })).toThrow(
      /position must be one of provider, call, attempt/,
    );
    expect(() => defineFilter({ name: 'x', position: 'call' })).toThrow(
      /either filter .* or start\/end hooks/,
    );
    expect(() => defineFilter({ name: 'x', position: 'call', filter: (next) => next, start() {} })).toThrow(
      /not both/,
    );
    const providerFilter = defineFilter({ name: 'audit', position: 'provider', start() {} });
    const error = await testApp({ filters: { consumer: [providerFilter] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(
      /filters\.consumer\[0\].*a provider filter cannot run on the consumer/,
    );
    const attemptFilter = defineFilter({ name: 'creds', position: 'attempt', start() {} });
    await expect(testApp({ filters: { provider: [attemptFilter] } })).rejects.toThrow(
      /filter "creds" is a attempt filter; it cannot be used at the provider position/,
    );
    const Plain = defineService<{ hi(): Promise<string> }>('test.PlainFilters', { methods: { hi: {} } });
    const app = await testApp();
    expect(() => app.refer(Plain, { url: '127.0.0.1:1', filters: [42 as never] })).toThrow(
      /refer\(test\.PlainFilters\)\.filters\[0\] = 42/,
    );
  });
});

/**
 * provide(): unknown options are refused when the service is provided, as refer()'s are — plain
 * JavaScript has no compiler to catch a misspelt option, and a lost `limits` is a lost promise.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CallistoApp, ConfigError, ProvideOptions } from '../../src/index.js';
import { type UserService, UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { configErrorOf } from '../support/config-error-of.js';

afterEach(closeAll);

const provideError = (app: CallistoApp, options: unknown): ConfigError =>
  configErrorOf(() =>
    app.provide(UserServiceDef, new UserServiceImpl(), options as ProvideOptions<UserService>),
  );

describe('provide() options', () => {
  it('refuses an unknown option with the closest one and the list of options', async () => {
    const app = await testApp();
    const error = provideError(app, { limts: { executes: 2 } });
    expect(error.key).toBe('limts');
    expect(error.message).toContain('unknown key limts');
    expect(error.message).toContain('did you mean limits?');
    expect(error.message).toContain('filters, methods, executor, limits, weight, tags');
    expect(error.message).toContain('provide(test.UserService)');
  });

  it("refuses an unknown option of one method, naming the method's path", async () => {
    const app = await testApp();
    const error = provideError(app, { methods: { getUser: { filter: [] } } });
    expect(error.key).toBe('methods.getUser.filter');
    expect(error.message).toContain('did you mean methods.getUser.filters?');
  });

  it('refuses options that are not an object', async () => {
    const app = await testApp();
    expect(provideError(app, 'fast').message).toContain('an object of provide() options');
    expect(provideError(app, { methods: { getUser: 3 } }).key).toBe('methods.getUser');
  });

  it('accepts every documented option, and undefined ones', async () => {
    const app = await testApp();
    app.provide(UserServiceDef, new UserServiceImpl(), {
      filters: [],
      weight: 50,
      tags: { zone: 'a' },
      limits: { executes: 4 },
      executor: 'loop',
      methods: { getUser: { filters: [], limits: { executes: 2 } } },
      // exactOptionalPropertyTypes: an explicit undefined is how a spread of optional options looks
      ...({ weight: undefined } as object),
    });
  });
});

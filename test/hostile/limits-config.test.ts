/** Limits that do not fit together, or out of range, fail at start with the key and the fix. */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

const Echo = defineService<{ echo(n: number): Promise<number> }>('test.LimitsEcho', {
  methods: { echo: {} },
});

describe('limit configuration', () => {
  it("refuses to start a provider whose connection's share cannot hold one body of maxDecodedElements", async () => {
    const app = await testApp({ maxDecodedElements: 5_000_000 });
    app.provide(Echo, { echo: (n) => n });
    const error = await app.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe('server.maxElementsInFlight');
    expect((error as Error).message).toContain(
      'at least maxDecodedElements / server.connectionShare = 10000000',
    );
  });

  it('lets a consumer-only app raise maxDecodedElements for large answers', async () => {
    const app = await testApp({ maxDecodedElements: 5_000_000 });
    await expect(app.start()).resolves.toBe(app);
  });

  it.each([
    ['server.connectionShare', { server: { connectionShare: 0 } }],
    ['server.addressShare', { server: { addressShare: 1.5 } }],
    ['maxInflateRatio', { maxInflateRatio: 0.5 }],
    ['server.exposeErrors', { server: { exposeErrors: 'some' } }],
  ])('refuses %s out of range', async (key, options) => {
    await expect(testApp(options as never)).rejects.toMatchObject({ name: 'ConfigError', key });
  });
});

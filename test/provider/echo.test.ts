/**
 * `echo(ref)` over real sockets: the `$echo` every provided service answers, through the provider's
 * filters (auth and access rules apply), without calling the service's business code.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, echo, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { codeOf } from '../support/outcome-code.js';

interface Orders {
  place(item: string): Promise<string>;
}

const OrdersDef = defineService<Orders>('echo.Orders', { methods: { place: {} } });
const TOKEN = 'echo-orders-token-0123456789abcdef';

afterEach(closeAll);

describe('echo', () => {
  it('answers through auth: refused without credentials, served with them, never calling the service', async () => {
    let placed = 0;
    const provider = await testApp({
      server: { port: 0, auth: { tokens: { shop: TOKEN }, defaultAccess: 'allow' } },
    });
    provider.provide(OrdersDef, {
      place: async (item) => {
        placed++;
        return item;
      },
    });
    await provider.start();
    const anonymous = await testApp();
    const ref = anonymous.refer(OrdersDef, { url: provider.address!, retries: 0 });
    expect(await codeOf(echo(ref))).toBe('Unauthorized');
    expect(await echo(withOptions(ref, { credentials: TOKEN }), 'are you there?')).toBe('are you there?');
    const shop = await testApp({ consumer: { credentials: TOKEN } });
    expect(await echo(shop.refer(OrdersDef, { url: provider.address! }))).toBe('echo');
    expect(placed).toBe(0);
  });

  it('is refused by the access rules like a method of the service', async () => {
    const provider = await testApp({
      server: {
        port: 0,
        auth: {
          tokens: { shop: TOKEN },
          defaultAccess: 'deny',
          rules: [{ service: 'echo.Orders', method: 'place', allow: ['shop'] }],
        },
      },
    });
    provider.provide(OrdersDef, { place: async (item) => item });
    await provider.start();
    const shop = await testApp({ consumer: { credentials: TOKEN } });
    const ref = shop.refer(OrdersDef, { url: provider.address!, retries: 0 });
    expect(await ref.place('x')).toBe('x');
    expect(await codeOf(echo(ref))).toBe('Unauthorized');
  });

  it('is answered in-process too, and a definition cannot declare $echo', async () => {
    const app = await testApp();
    app.provide(OrdersDef, { place: async (item) => item });
    await app.start();
    expect(await echo(app.refer(OrdersDef), 42)).toBe(42);
    expect(() => defineService('echo.Clash', { methods: { $echo: {} } })).toThrow(/\$echo/);
  });
});

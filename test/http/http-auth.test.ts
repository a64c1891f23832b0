/**
 * The HTTP/JSON entry runs the provider's authentication and access rules (issue 11's filters) as TCP
 * calls do: a caller of another stack sends its credentials in the standard `Authorization` header.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll } from '../support/apps.js';
import { httpProvider, post } from './support.js';

afterEach(closeAll);

const TOKEN = 'orders-http-token-0123456789abcdef';

describe('HTTP/JSON entry with server.auth', () => {
  it('accepts the Authorization header, refuses a missing or wrong one with 401, never running the method', async () => {
    const { base } = await httpProvider({
      server: { auth: { tokens: { orders: TOKEN }, defaultAccess: 'allow' } },
    });
    const ok = await post(`${base}/example.UserService/getUser`, '[7]', { authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ id: 7 });
    const missing = await post(`${base}/example.UserService/getUser`, '[7]');
    expect(missing.status).toBe(401);
    expect(missing.json).toMatchObject({ error: { code: 'Unauthorized' } });
    const wrong = await post(`${base}/example.UserService/getUser`, '[7]', { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.json)).not.toContain('nope');
  });

  it('applies access rules to the identity the header proves', async () => {
    const { base } = await httpProvider({
      server: {
        auth: {
          tokens: { orders: TOKEN },
          defaultAccess: 'deny',
          rules: [{ service: 'example.UserService', method: 'getUser', allow: ['orders'] }],
        },
      },
    });
    const allowed = await post(`${base}/example.UserService/getUser`, '[1]', {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(allowed.status).toBe(200);
    const denied = await post(`${base}/example.UserService/whoami`, '[]', {
      authorization: `Bearer ${TOKEN}`,
    });
    expect([401, 403]).toContain(denied.status);
  });
});

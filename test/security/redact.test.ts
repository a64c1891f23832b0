/** redactConfig: what shows configuration shows no secret (the CLI's `config explain` uses it). */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, HIDDEN, redactConfig } from '../../src/index.js';

describe('redactConfig', () => {
  it('hides token values, the JWT secret, credentials and PEM keys; keeps key paths, ids and the rest', () => {
    const config = {
      ...DEFAULT_CONFIG,
      server: {
        ...DEFAULT_CONFIG.server,
        tls: {
          ...DEFAULT_CONFIG.server.tls,
          key: '/etc/callisto/server.key',
          cert: '-----BEGIN CERTIFICATE-----x',
        },
        auth: {
          ...DEFAULT_CONFIG.server.auth,
          tokens: { orders: 'orders-secret-0123456789' },
          jwtSecret: 's'.repeat(40),
        },
      },
      consumer: {
        ...DEFAULT_CONFIG.consumer,
        credentials: 'my-credentials-0123456789',
        tls: { ...DEFAULT_CONFIG.consumer.tls, key: '-----BEGIN PRIVATE KEY-----abc' },
      },
    };
    const shown = redactConfig(config);
    expect(shown.server.auth.tokens).toEqual({ orders: HIDDEN });
    expect(shown.server.auth.jwtSecret).toBe(HIDDEN);
    expect(shown.consumer.credentials).toBe(HIDDEN);
    expect(shown.consumer.tls.key).toBe(HIDDEN);
    expect(shown.server.tls.key).toBe('/etc/callisto/server.key'); // a path is no secret
    expect(shown.server.tls.cert).toBe('-----BEGIN CERTIFICATE-----x'); // nor a certificate
    expect(shown.application).toBe(config.application);
    expect(JSON.stringify(shown)).not.toMatch(/orders-secret|sssss|my-credentials|PRIVATE KEY/);
    expect(config.server.auth.jwtSecret).toBe('s'.repeat(40)); // a copy: the original is untouched
    // unset secrets stay as they are ('' and {})
    expect(redactConfig(DEFAULT_CONFIG)).toEqual(DEFAULT_CONFIG);
  });
});

/** redactConfig: what shows configuration shows no secret (the CLI's `config explain` uses it). */
import { describe, expect, it } from 'vitest';
import { ConfigError, callisto, DEFAULT_CONFIG } from '../../src/index.js';
import { HIDDEN, redactConfig } from '../../src/internal.js';
import { parseRegistryAddress } from '../../src/registry/registry-address.js';
import { redactAddress } from '../../src/security/redact.js';

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

describe('registry credentials', () => {
  it('redactAddress hides the password of kind://user:password@, secret query parameters, and nothing else', () => {
    expect(redactAddress('redis://:pw-123@localhost:6379')).toBe(`redis://:${HIDDEN}@localhost:6379`);
    expect(redactAddress('redis://ops:pw-123@h1')).toBe(`redis://ops:${HIDDEN}@h1`);
    expect(redactAddress('etcd://h:2379?username=root&password=pw-123&ttl=5000')).toBe(
      `etcd://h:2379?username=root&password=${HIDDEN}&ttl=5000`,
    );
    expect(redactAddress('redis-sentinel://s1,s2/m?sentinelPassword=pw-456&db=1')).toBe(
      `redis-sentinel://s1,s2/m?sentinelPassword=${HIDDEN}&db=1`,
    );
    expect(redactAddress('"ops:pw-123@h1" is not host:port')).toBe(`"ops:${HIDDEN}@h1" is not host:port`);
    expect(redactAddress('file://.callisto/registry')).toBe('file://.callisto/registry');
  });

  it('redactConfig hides the credentials of registry addresses', () => {
    const shown = redactConfig({
      ...DEFAULT_CONFIG,
      registry: ['redis://h:6379?password=registry-pw-123', 'etcd://root:etcd-pw-456@h:2379'],
    });
    expect(JSON.stringify(shown)).not.toMatch(/registry-pw|etcd-pw/);
    expect(shown.registry).toEqual([`redis://h:6379?password=${HIDDEN}`, `etcd://root:${HIDDEN}@h:2379`]);
  });

  it('a refused registry address names itself in its ConfigError without its password', async () => {
    for (const registry of [
      'redis://:refused-pw-123@localhost:6379',
      'etcd://h:2379?ttl=abc&password=refused-pw-123',
    ]) {
      const error = await callisto({ registry: [registry], load: { configFile: false, env: false } }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect(String((error as Error).message)).toContain(HIDDEN);
      expect(String((error as Error).message)).not.toContain('refused-pw');
      expect(String((error as Error).cause ?? '')).not.toContain('refused-pw');
    }
    expect(() => parseRegistryAddress('redis://:refused-pw-123@localhost')).toThrow(
      /invalid registry address/,
    );
    expect(() => parseRegistryAddress('redis://:refused-pw-123@localhost')).not.toThrow(/refused-pw/);
  });
});

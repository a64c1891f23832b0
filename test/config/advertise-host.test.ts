/**
 * What a provider announces (src/provider/advertise-host.ts), from a given interface table, and the
 * configuration check that keeps a wildcard or a port out of `server.advertiseHost`. The namespaced
 * counterpart, with real interfaces and a consumer on another host: test/multihost/advertise.test.ts.
 */
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, defineService } from '../../src/index.js';
import { advertisedHostOf, type InterfaceTable, isWildcardHost } from '../../src/provider/advertise-host.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

function info(address: string, family: 'IPv4' | 'IPv6', internal = false): NetworkInterfaceInfo {
  const base = { address, netmask: '', mac: '00:00:00:00:00:00', internal, cidr: null };
  return family === 'IPv4' ? { ...base, family } : { ...base, family, scopeid: 0 };
}

const loopbackOnly: InterfaceTable = { lo: [info('127.0.0.1', 'IPv4', true), info('::1', 'IPv6', true)] };
const typical: InterfaceTable = {
  lo: [info('127.0.0.1', 'IPv4', true)],
  eth0: [info('fe80::1', 'IPv6'), info('fd00::5', 'IPv6'), info('10.0.0.5', 'IPv4')],
  eth1: [info('192.168.1.9', 'IPv4')],
};

describe('the host a provider announces', () => {
  it('announces advertiseHost when set, else the bound host when it is one address', () => {
    expect(advertisedHostOf({ host: '0.0.0.0', advertiseHost: 'api.example' }, typical)).toEqual({
      host: 'api.example',
    });
    expect(advertisedHostOf({ host: '10.0.0.5', advertiseHost: '' }, typical)).toEqual({ host: '10.0.0.5' });
    expect(advertisedHostOf({ host: '127.0.0.1' }, typical)).toEqual({ host: '127.0.0.1' });
  });

  it('for a wildcard bind, the first non-internal IPv4 address in interface order', () => {
    for (const host of ['0.0.0.0', '::', '[::]']) {
      expect(advertisedHostOf({ host }, typical)).toEqual({ host: '10.0.0.5' });
    }
  });

  it('then a global IPv6 address, never a link-local one', () => {
    const v6only: InterfaceTable = {
      lo: loopbackOnly['lo'],
      eth0: [info('fe80::1', 'IPv6'), info('fd00::5', 'IPv6')],
    };
    expect(advertisedHostOf({ host: '::' }, v6only)).toEqual({ host: 'fd00::5' });
    const linkLocalOnly: InterfaceTable = { eth0: [info('fe80::1', 'IPv6')] };
    expect(advertisedHostOf({ host: '::' }, linkLocalOnly).host).toBe('::1');
  });

  it('falls back to loopback only on a machine without any other address, and says so', () => {
    const fallback = advertisedHostOf({ host: '0.0.0.0' }, loopbackOnly);
    expect(fallback.host).toBe('127.0.0.1');
    expect(fallback.warning).toMatch(
      /no non-internal network address: announcing 127\.0\.0\.1.*server\.advertiseHost/,
    );
    expect(isWildcardHost('0.0.0.0') && isWildcardHost('::') && !isWildcardHost('10.0.0.1')).toBe(true);
  });

  it('announces a reachable address for a real wildcard bind on this machine, never 0.0.0.0', async () => {
    const app = await testApp({ server: { host: '0.0.0.0' } });
    const PingDef = defineService<{ ping(): Promise<string> }>('test.Ping', { version: '1.0.0' });
    app.provide(PingDef, { ping: () => 'pong' });
    await app.start();
    const host = app.address!.slice(0, app.address!.lastIndexOf(':'));
    // what this machine lists first, found here without the code under test
    const external = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((info) => !info.internal && info.family === 'IPv4');
    expect(host).toBe(external?.address ?? '127.0.0.1');
    expect(host).not.toBe('0.0.0.0');
  });

  it.each(['0.0.0.0', '::', '10.0.0.5:20880', 'two words'])(
    'refuses server.advertiseHost = %j at callisto(), naming the key',
    async (value) => {
      const error = await testApp({ server: { advertiseHost: value } }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(/server\.advertiseHost/);
      expect((error as ConfigError).message).toMatch(/not a wildcard such as 0\.0\.0\.0, without a port/);
    },
  );
});

import { describe, expect, it } from 'vitest';
import { builtinExtensions } from '../app/builtin-extensions.js';
import { createRegistry } from './create-registry.js';
import { directProviderRecord } from './direct-registry.js';
import { loadOptionalPackage } from './load-optional.js';
import { parseRegistryAddress } from './registry-address.js';

describe('built-in registries', () => {
  it('are registered as registry extensions', () => {
    expect(builtinExtensions.names('registry')).toEqual(
      expect.arrayContaining(['file', 'direct', 'etcd', 'zookeeper', 'zk', 'redis', 'redis-sentinel']),
    );
  });

  it('name the known kinds for an unknown one', async () => {
    await expect(createRegistry('consul://h:8500')).rejects.toThrow(/no registry extension named "consul"/);
  });

  it('say which package to install when a client is missing', async () => {
    const address = parseRegistryAddress('etcd://127.0.0.1:2379');
    await expect(loadOptionalPackage('callisto-no-such-package', address)).rejects.toThrow(
      'registry "etcd://127.0.0.1:2379" needs the package callisto-no-such-package: npm install callisto-no-such-package',
    );
    const failing = async () => {
      throw Object.assign(new Error("Cannot find package 'etcd3'"), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    await expect(loadOptionalPackage('etcd3', address, failing)).rejects.toThrow(
      /needs the package etcd3: npm install etcd3/,
    );
  });
});

describe('direct registry', () => {
  it('yields one synthetic record per address for any service; register is a no-op', async () => {
    const registry = await createRegistry('direct://127.0.0.1:9000,[::1]:9001');
    const key = { name: 'a.B', version: '2.0.0', group: 'g' };
    await registry.register({ ...directProviderRecord(key, '10.0.0.1:1'), application: 'x' });
    const lists: unknown[] = [];
    const unsubscribe = await registry.subscribe(key, (list) => lists.push(list));
    expect(lists).toEqual([
      [directProviderRecord(key, '127.0.0.1:9000'), directProviderRecord(key, '[::1]:9001')],
    ]);
    expect(lists[0]).toMatchObject([
      { host: '127.0.0.1', port: 9000, weight: 100, serializers: ['msgpack', 'json', 'v8'], methods: [] },
      { host: '::1', port: 9001, startTime: 0, service: 'a.B', version: '2.0.0', group: 'g' },
    ]);
    expect(registry.status).toBe('connected');
    unsubscribe();
    await registry.close();
    await registry.close();
  });
});

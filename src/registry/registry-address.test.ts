import { describe, expect, it } from 'vitest';
import { RpcError } from '../core/rpc-error.js';
import { formatRegistryAddress, parseRegistryAddress } from './registry-address.js';
import { resolveRegistryOptions } from './registry-options.js';

describe('parseRegistryAddress', () => {
  it('parses hosts and query parameters', () => {
    expect(parseRegistryAddress('etcd://h1:2379,h2:2380?ttl=5000')).toEqual({
      kind: 'etcd',
      hosts: ['h1:2379', 'h2:2380'],
      params: { ttl: '5000' },
      raw: 'etcd://h1:2379,h2:2380?ttl=5000',
    });
  });

  it('lower-cases the kind, trims entries and applies default ports', () => {
    expect(parseRegistryAddress('ZooKeeper://zk1, zk2:2182').hosts).toEqual(['zk1:2181', 'zk2:2182']);
    expect(parseRegistryAddress('redis://cache').hosts).toEqual(['cache:6379']);
    expect(parseRegistryAddress('etcd://[::1]:2379').hosts).toEqual(['[::1]:2379']);
  });

  it('keeps a file:// directory whole, relative or absolute', () => {
    expect(parseRegistryAddress('file://.callisto').hosts).toEqual(['.callisto']);
    expect(parseRegistryAddress('file:///var/lib/callisto?ttl=3000')).toMatchObject({
      kind: 'file',
      hosts: ['/var/lib/callisto'],
      params: { ttl: '3000' },
    });
    expect(parseRegistryAddress('file://./a,b').hosts).toEqual(['./a,b']);
  });

  it('parses redis-sentinel:// with its sentinels and the master name', () => {
    expect(
      parseRegistryAddress('redis-sentinel://s1:26380,s2,[::1]/mymaster?db=2&sentinelPassword=x'),
    ).toEqual({
      kind: 'redis-sentinel',
      hosts: ['s1:26380', 's2:26379', '[::1]:26379'],
      params: { db: '2', sentinelPassword: 'x', master: 'mymaster' },
      raw: 'redis-sentinel://s1:26380,s2,[::1]/mymaster?db=2&sentinelPassword=x',
    });
    expect(parseRegistryAddress('redis-sentinel://s1/my%20master').params['master']).toBe('my master');
  });

  it('requires ports for direct://', () => {
    expect(parseRegistryAddress('direct://127.0.0.1:9000,10.0.0.2:9001').hosts).toEqual([
      '127.0.0.1:9000',
      '10.0.0.2:9001',
    ]);
    expect(() => parseRegistryAddress('direct://127.0.0.1')).toThrow(
      /"127\.0\.0\.1" has no port \(direct:\/\/ has no default port; write 127\.0\.0\.1:<port>\)/,
    );
  });

  it.each([
    ['etcd:/h:1', /missing "kind:\/\/"/],
    ['h1:2379', /missing "kind:\/\/"/],
    ['etcd://', /no host/],
    ['file://', /no directory/],
    ['etcd://h:0', /not between 1 and 65535/],
    ['etcd://h:99999', /not between 1 and 65535/],
    ['etcd://h:2x', /is not host:port/],
    [
      'etcd://h:2379/',
      /"h:2379\/" ends with a slash; etcd:\/\/ takes host:port entries only, remove the "\/"/,
    ],
    ['redis://h:6379/0', /"h:6379\/0" has a path "\/0"; redis:\/\/ takes host:port entries only/],
    ['consul://h', /"h" has no port \(consul:\/\/ has no default port; write h:<port>\)/],
    [
      'redis://h1:6379,h2:6379',
      /2 hosts: redis:\/\/ takes one server; .*redis-sentinel:\/\/s1:26379,s2:26379,s3:26379\/<master name>/,
    ],
    [
      'redis-sentinel://s1:26379,s2:26379',
      /redis-sentinel:\/\/ needs the master name the sentinels monitor after the hosts, once: redis-sentinel:\/\/s1:26379/,
    ],
    ['redis-sentinel://s1:26379/', /needs the master name/],
    ['redis-sentinel://s1:26379/a/b', /needs the master name .* once/],
    ['redis-sentinel://s1/a?master=b', /the master is given twice/],
    ['redis-sentinel://s1/%E0%A4%A', /is not a valid URL-encoded name/],
  ])('rejects %s with a BadRequest naming it', (raw, why) => {
    let caught: unknown;
    try {
      parseRegistryAddress(raw);
    } catch (error) {
      caught = error;
    }
    expect(RpcError.is(caught)).toBe(true);
    expect((caught as RpcError).code).toBe('BadRequest');
    expect((caught as RpcError).message).toContain(`"${raw}"`);
    expect((caught as RpcError).message).toMatch(why);
  });

  it('formats an address back', () => {
    expect(formatRegistryAddress({ kind: 'etcd', hosts: ['a:1'], params: { ttl: '1' }, raw: '' })).toBe(
      'etcd://a:1?ttl=1',
    );
  });
});

describe('resolveRegistryOptions', () => {
  it('fills defaults, then code options, then the address parameters', () => {
    const address = parseRegistryAddress('etcd://h:2379?ttl=4000&root=/svc/');
    const options = resolveRegistryOptions(address, { ttlMs: 9_000, maxBackoffMs: 700 });
    expect(options.ttlMs).toBe(4_000);
    expect(options.root).toBe('/svc');
    expect(options.maxBackoffMs).toBe(700);
  });

  it('names the bad key and value', () => {
    expect(() => resolveRegistryOptions(parseRegistryAddress('etcd://h?ttl=soon'))).toThrow(
      /ttl = "soon" is not an integer >= 1/,
    );
    expect(() => resolveRegistryOptions(parseRegistryAddress('etcd://h'), { root: 'callisto' })).toThrow(
      /root = "callisto" is not an absolute path/,
    );
  });
});

/**
 * `direct://h:p,h:p`: no registry server. Every subscription gets the same fixed list, one synthetic
 * provider record per address (weight 100, serializers msgpack/json/v8, methods unknown, start time 0);
 * register and unregister are no-ops. For tests, scripts and point-to-point setups.
 */
import type { ServiceKey } from '../core/service-key.js';
import type { ProviderRecord } from './provider-record.js';
import type { Registry, RegistryAddress, RegistryStatus } from './registry.js';

/** The record `direct://` reports for an address (served over `transport`, TCP by default). */
export function directProviderRecord(key: ServiceKey, hostPort: string, transport = 'tcp'): ProviderRecord {
  const at = hostPort.lastIndexOf(':');
  const rawHost = hostPort.slice(0, at);
  const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  return {
    service: key.name,
    version: key.version,
    group: key.group,
    host,
    port: Number(hostPort.slice(at + 1)),
    protocol: 'callisto',
    ...(transport === 'tcp' ? {} : { transport }),
    serializers: ['msgpack', 'json', 'v8'],
    weight: 100,
    methods: [],
    application: '',
    pid: 0,
    startTime: 0,
    tags: {},
  };
}

export function createDirectRegistry(address: RegistryAddress): Registry {
  let closed = false;
  return {
    kind: 'direct',
    get status(): RegistryStatus {
      return closed ? 'disconnected' : 'connected';
    },
    async register() {},
    async unregister() {},
    async registerConsumer() {},
    async unregisterConsumer() {},
    async subscribe(key, listener) {
      listener(address.hosts.map((hostPort) => directProviderRecord(key, hostPort)));
      return () => {};
    },
    onStatus() {
      return () => {};
    },
    async close() {
      closed = true;
    },
  };
}

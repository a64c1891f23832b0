/**
 * The layout every server-backed registry shares:
 *
 *   <root>/<service>:<version>/providers/<host>:<port>   -> provider record (JSON)
 *   <root>/<service>:<version>/consumers/<host>:<pid>    -> consumer record (JSON)
 *
 * `<service>:<version>` is `servicePathSegment(key)` (the group, when set, is prefixed and URL-encoded).
 */
import type { ServiceKey } from '../core/service-key.js';
import {
  type ConsumerRecord,
  type ProviderRecord,
  providerAddress,
  recordServiceKey,
  servicePathSegment,
} from './provider-record.js';

/** `<root>/<segment>/providers` (no trailing slash). */
export function providersPath(root: string, segment: string): string {
  return `${root}/${segment}/providers`;
}

/** `<root>/<segment>/consumers` (no trailing slash). */
export function consumersPath(root: string, segment: string): string {
  return `${root}/${segment}/consumers`;
}

/** Where a provider record lives. */
export function providerPath(root: string, record: ProviderRecord): string {
  return `${providersPath(root, servicePathSegment(recordServiceKey(record)))}/${providerAddress(record)}`;
}

/** Where a consumer record lives. */
export function consumerPath(root: string, record: ConsumerRecord): string {
  return `${consumersPath(root, servicePathSegment(recordServiceKey(record)))}/${record.host}:${record.pid}`;
}

/** The segment of a service key (re-exported here so drivers import paths from one place). */
export function segmentOf(key: ServiceKey): string {
  return servicePathSegment(key);
}

/** The record as stored: compact JSON. */
export function encodeRecord(record: ProviderRecord | ConsumerRecord): string {
  return JSON.stringify(record);
}

/**
 * Reads a stored provider record; returns undefined for anything that is not one (a foreign or
 * half-written entry must not break the list).
 */
export function decodeProviderRecord(text: string | Buffer | null | undefined): ProviderRecord | undefined {
  if (text === null || text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r['host'] !== 'string' || typeof r['port'] !== 'number' || typeof r['service'] !== 'string') {
    return undefined;
  }
  return {
    service: r['service'],
    version: typeof r['version'] === 'string' ? r['version'] : '',
    group: typeof r['group'] === 'string' ? r['group'] : '',
    host: r['host'],
    port: r['port'],
    protocol: typeof r['protocol'] === 'string' ? r['protocol'] : 'callisto',
    serializers: Array.isArray(r['serializers']) ? (r['serializers'] as unknown[]).map(String) : [],
    weight: typeof r['weight'] === 'number' ? r['weight'] : 100,
    methods: Array.isArray(r['methods']) ? (r['methods'] as unknown[]).map(String) : [],
    application: typeof r['application'] === 'string' ? r['application'] : '',
    pid: typeof r['pid'] === 'number' ? r['pid'] : 0,
    startTime: typeof r['startTime'] === 'number' ? r['startTime'] : 0,
    tags: typeof r['tags'] === 'object' && r['tags'] !== null ? (r['tags'] as Record<string, string>) : {},
  };
}

/** Sorts by `host:port` and drops duplicates (the first wins), so equal lists compare equal. */
export function normalizeProviders(records: Iterable<ProviderRecord>): ProviderRecord[] {
  const byAddress = new Map<string, ProviderRecord>();
  for (const record of records) {
    const address = providerAddress(record);
    if (!byAddress.has(address)) byAddress.set(address, record);
  }
  return [...byAddress.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}

/**
 * The layout every server-backed registry shares:
 *
 *   <root>/<service>:<version>/providers/<host>:<port>   -> provider record (JSON)
 *   <root>/<service>:<version>/consumers/<host>:<pid>:<instance>    -> consumer record (JSON)
 *   <root>/<service>:<version>/config                    -> override record (JSON, override-record.ts)
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

/** `<root>/<segment>/config`: the override record of runtime control (persistent). */
export function configPath(root: string, segment: string): string {
  return `${root}/${segment}/config`;
}

/** Where a provider record lives. */
export function providerPath(root: string, record: ProviderRecord): string {
  return `${providersPath(root, servicePathSegment(recordServiceKey(record)))}/${providerAddress(record)}`;
}

/** Where a consumer record lives. */
export function consumerPath(root: string, record: ConsumerRecord): string {
  const id = record.instance
    ? `${record.host}:${record.pid}:${record.instance}`
    : `${record.host}:${record.pid}`;
  return `${consumersPath(root, servicePathSegment(recordServiceKey(record)))}/${id}`;
}

/** The segment of a service key (re-exported here so drivers import paths from one place). */
export function segmentOf(key: ServiceKey): string {
  return servicePathSegment(key);
}

/** The record as stored: compact JSON. */
export function encodeRecord(record: ProviderRecord | ConsumerRecord): string {
  return JSON.stringify(record);
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

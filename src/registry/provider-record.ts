import { REDACTED_TOKEN } from '../core/registry-token.js';
import type { ServiceKey } from '../core/service-key.js';

/** What a provider announces for one service, stored as JSON under its registry key. */
export interface ProviderRecord {
  /** Service name, version and group. */
  readonly service: string;
  readonly version: string;
  readonly group: string;
  /** Address consumers connect to. */
  readonly host: string;
  readonly port: number;
  /** Wire protocol, `callisto`. */
  readonly protocol: string;
  /**
   * The transport consumers connect with (`memory`, a user transport), written only when it is not
   * `tcp`: a record without it is served over TCP.
   */
  readonly transport?: string;
  /** The provider's HTTP/JSON entry (docs/http.md), on the record's host, when it serves one. */
  readonly http?: { readonly port: number };
  /**
   * The entries the service is served on (`provide(…, { protocols })`): `callisto` (this port), `http`
   * (the HTTP/JSON entry). Absent in records written before it existed: `callisto`, and `http` when
   * the record has an `http` port.
   */
  readonly protocols?: readonly string[];
  /**
   * The provider serves TLS only on its port (transport `tls`): a consumer calls it over TLS or not at
   * all. A record with `tls: true` and no transport (or `tcp`) is read as transport `tls`.
   */
  readonly tls?: true;
  /** Serializer names the provider accepts. */
  readonly serializers: string[];
  /** Load-balancing weight (default 100). */
  readonly weight: number;
  /** Declared method names. */
  readonly methods: string[];
  /** The providing application's name. */
  readonly application: string;
  readonly pid: number;
  /** When the provider started (ms since epoch), used for warm-up. */
  readonly startTime: number;
  /** Free-form labels (zone, env, ...). */
  readonly tags: Record<string, string>;
  /** Where the providing app's admin endpoints are (docs/observability.md), when it serves them. */
  readonly admin?: { readonly host: string; readonly port: number };
  /**
   * `server.auth.registryToken`: the token the provider requires on every call (consumers that read
   * this record send it). Never shown: tools print `withoutToken(record)`.
   */
  readonly token?: string;
}

/** A record as tools show it: its token (if any) redacted. */
export function withoutToken<R extends ProviderRecord>(record: R): R {
  return record.token === undefined ? record : { ...record, token: REDACTED_TOKEN };
}

/** What a consumer announces for one service it refers to. */
export interface ConsumerRecord {
  readonly service: string;
  readonly version: string;
  readonly group: string;
  readonly host: string;
  readonly pid: number;
  readonly application: string;
  readonly startTime: number;
  /**
   * Tells apart the consumers of one process (two apps, or two directories of one service): part of the
   * record's key, `<host>:<pid>:<instance>`. Records written without it are keyed `<host>:<pid>`.
   */
  readonly instance?: string;
  /**
   * The methods this consumer can answer from a mock (a reference's `mockImpl`, a declared `mock`), as
   * known when it was announced: the control refuses `mock force` on a method no consumer has a mock
   * for. Absent in records written before it existed (unknown).
   */
  readonly mocks?: readonly string[];
}

/** `host:port` of a provider record. */
export function providerAddress(record: Pick<ProviderRecord, 'host' | 'port'>): string {
  return `${record.host}:${record.port}`;
}

/** The service key a record belongs to. */
export function recordServiceKey(record: Pick<ProviderRecord, 'service' | 'version' | 'group'>): ServiceKey {
  return { name: record.service, version: record.version, group: record.group };
}

/**
 * The registry path segment of a service: `<service>:<version>`, with the group (when set) prefixed as
 * `<group>/<service>:<version>` and URL-encoded so it stays one path segment.
 */
export function servicePathSegment(key: ServiceKey): string {
  const plain = key.group ? `${key.group}/${key.name}:${key.version}` : `${key.name}:${key.version}`;
  return encodeURIComponent(plain).replace(/%3A/g, ':');
}

/** The service key of a path segment written by `servicePathSegment`, or undefined for anything else. */
export function parseServicePathSegment(segment: string): ServiceKey | undefined {
  let plain: string;
  try {
    plain = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  const colon = plain.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const qualified = plain.slice(0, colon);
  const slash = qualified.lastIndexOf('/');
  const name = qualified.slice(slash + 1);
  if (name === '') return undefined;
  return { name, version: plain.slice(colon + 1), group: slash === -1 ? '' : qualified.slice(0, slash) };
}

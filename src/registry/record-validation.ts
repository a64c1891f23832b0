/**
 * The rules a stored provider record must pass before a consumer uses it. Records come from shared
 * servers and directories anyone with access can write to, so they are checked where they are read:
 *
 * - a JSON object of at most `MAX_RECORD_BYTES` bytes;
 * - `service`: a non-empty string; `version` and `group`: strings when present;
 * - `host`: a non-empty string without spaces or control characters, at most 255 characters;
 * - `port`: an integer from 1 to 65535 (a number, not a string);
 * - `protocol`: `callisto` when present;
 * - `transport`: when present, a transport name (lowercase letters, digits, `-`, at most 32); absent
 *   means `tcp`;
 * - `http`: when present, `{ port }` with a port as above (the HTTP/JSON entry on the same host);
 * - `token`: when present, a string of 1 to 256 characters (`server.auth.registryToken`);
 * - `protocols`: when present, a list of protocol names (the entries the service is served on);
 * - `tls`: a boolean when present; `true` (TLS only) with no transport, or `tcp`, reads as transport
 *   `tls`, and transport `tls` implies `tls: true`;
 * - `weight`: a number, clamped to 0..`MAX_PROVIDER_WEIGHT`; 100 when absent;
 * - `startTime`: a positive number (ms since epoch); when absent (or 0) the provider counts as just
 *   started, i.e. the time the reader first saw the entry, so warm-up applies;
 * - `admin`: when present, `{ host, port }` (where the provider's admin endpoints are), as `host` and
 *   `port` are checked;
 * - descriptive fields (`serializers`, `methods`, `application`, `pid`, `tags`) of the wrong type fall
 *   back to their defaults; unknown fields are ignored (and not copied).
 *
 * A record that fails is skipped; the reader (record-reader.ts) logs it once.
 */
import type { ProviderRecord } from './provider-record.js';

/** Largest stored record accepted, bytes. Real records are a few hundred bytes. */
export const MAX_RECORD_BYTES = 64 * 1024;

/** Weights above this are lowered to it (one record cannot take all the traffic). */
export const MAX_PROVIDER_WEIGHT = 10_000;

/** Weight of a record that names none. */
export const DEFAULT_PROVIDER_WEIGHT = 100;

export type RecordCheck =
  | { record: ProviderRecord; problem?: undefined }
  | { record?: undefined; problem: string };

/** 1 to 255 characters, none of them a space or a control character. */
export function isHostName(host: string): boolean {
  if (host.length === 0 || host.length > 255) return false;
  for (let i = 0; i < host.length; i++) {
    const code = host.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return false;
  }
  return true;
}

const fail = (problem: string): RecordCheck => ({ problem });

/** A transport name as records write it. */
const TRANSPORT_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** A protocol name in `protocols` (`callisto`, `http`, and entries to come). */
const PROTOCOL_NAME = /^[a-z][a-z0-9-]{0,31}$/;

const describe = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 40 ? `${text.slice(0, 40)}...` : text;
};

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

const stringMap = (value: unknown): Record<string, string> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true });
  }
  return out;
};

/** `{ port }` with a port from 1 to 65535 (the HTTP entry of a record). */
function isHttpEntry(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const port = (value as Record<string, unknown>)['port'];
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65_535;
}

/** Checks a parsed record; `firstSeen` is the start time given to a record without one. */
export function validateProviderRecord(value: unknown, firstSeen: number): RecordCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(`not a JSON object (${describe(value)})`);
  }
  const r = value as Record<string, unknown>;
  const { service, version, group, host, port, protocol, transport, tls, weight, startTime } = r;
  if (typeof service !== 'string' || service === '')
    return fail(`service ${describe(service)} is not a name`);
  if (version !== undefined && typeof version !== 'string')
    return fail(`version ${describe(version)} is not a string`);
  if (group !== undefined && typeof group !== 'string')
    return fail(`group ${describe(group)} is not a string`);
  if (typeof host !== 'string' || !isHostName(host))
    return fail(`host ${describe(host)} is not a host name or address`);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535) {
    return fail(`port ${describe(port)} is not an integer from 1 to 65535`);
  }
  if (protocol !== undefined && protocol !== 'callisto')
    return fail(`protocol ${describe(protocol)} is not callisto`);
  if (transport !== undefined && (typeof transport !== 'string' || !TRANSPORT_NAME.test(transport))) {
    return fail(`transport ${describe(transport)} is not a transport name`);
  }
  const http = r['http'];
  if (http !== undefined && !isHttpEntry(http)) {
    return fail(`http ${describe(http)} is not { port } with a port from 1 to 65535`);
  }
  const protocols = r['protocols'];
  if (
    protocols !== undefined &&
    (!Array.isArray(protocols) || !protocols.every((p) => typeof p === 'string' && PROTOCOL_NAME.test(p)))
  ) {
    return fail(`protocols ${describe(protocols)} is not a list of protocol names`);
  }
  if (tls !== undefined && typeof tls !== 'boolean') return fail(`tls ${describe(tls)} is not true or false`);
  // TLS only: a record saying so is called over TLS whatever else it says about TCP
  const tlsOnly = tls === true || transport === 'tls';
  const plainTransport = transport === undefined || transport === 'tcp';
  if (weight !== undefined && (typeof weight !== 'number' || Number.isNaN(weight))) {
    return fail(`weight ${describe(weight)} is not a number`);
  }
  if (
    startTime !== undefined &&
    startTime !== null &&
    (typeof startTime !== 'number' || !Number.isFinite(startTime))
  ) {
    return fail(`startTime ${describe(startTime)} is not a time in ms`);
  }
  const token = r['token'];
  if (token !== undefined && (typeof token !== 'string' || token.length === 0 || token.length > 256))
    return fail('token is not a string of 1 to 256 characters');
  const admin = r['admin'];
  if (admin !== undefined && !isAdminAddress(admin))
    return fail(`admin ${describe(admin)} is not { host, port } of the admin endpoints`);
  return {
    record: {
      service,
      version: version ?? '',
      group: group ?? '',
      host,
      port,
      protocol: 'callisto',
      ...(tlsOnly && plainTransport ? { transport: 'tls' } : plainTransport ? {} : { transport }),
      ...(tlsOnly ? { tls: true as const } : {}),
      ...(http === undefined ? {} : { http: { port: (http as { port: number }).port } }),
      ...(protocols === undefined ? {} : { protocols: [...(protocols as string[])] }),
      serializers: strings(r['serializers']),
      weight:
        weight === undefined ? DEFAULT_PROVIDER_WEIGHT : Math.min(MAX_PROVIDER_WEIGHT, Math.max(0, weight)),
      methods: strings(r['methods']),
      application: typeof r['application'] === 'string' ? r['application'] : '',
      pid: typeof r['pid'] === 'number' && Number.isInteger(r['pid']) ? r['pid'] : 0,
      startTime: typeof startTime === 'number' && startTime > 0 ? startTime : firstSeen,
      tags: stringMap(r['tags']),
      ...(admin === undefined ? {} : { admin: { host: admin.host, port: admin.port } }),
      ...(token === undefined ? {} : { token: token as string }),
    },
  };
}

/** `admin`: where the provider's admin endpoints are (a host name and a port). */
function isAdminAddress(value: unknown): value is { host: string; port: number } {
  if (typeof value !== 'object' || value === null) return false;
  const { host, port } = value as Record<string, unknown>;
  return (
    typeof host === 'string' &&
    isHostName(host) &&
    typeof port === 'number' &&
    Number.isInteger(port) &&
    port >= 1 &&
    port <= 65_535
  );
}

/** Parses stored bytes and checks the record; the problem names what is wrong. */
export function parseProviderRecord(stored: string | Uint8Array, firstSeen: number): RecordCheck {
  const size = typeof stored === 'string' ? Buffer.byteLength(stored) : stored.byteLength;
  if (size === 0) return fail('empty');
  if (size > MAX_RECORD_BYTES) return fail(`${size} bytes, more than ${MAX_RECORD_BYTES}`);
  let value: unknown;
  try {
    value = JSON.parse(typeof stored === 'string' ? stored : Buffer.from(stored).toString('utf8'));
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  return validateProviderRecord(value, firstSeen);
}

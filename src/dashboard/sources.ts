/**
 * What the dashboard reads from outside the registries, behind one narrow interface: the providers'
 * admin endpoints (`/stats`, `/services`, `/config`, as docs/observability.md describes them; their
 * answers checked where read) and the registry's runtime control (`createRegistryControl` of
 * `callisto/registry`).
 */
import {
  createRegistryControl,
  type ProviderRecord,
  type Registry,
  type RegistryAddress,
  type RegistryControl,
} from '../registry/index.js';

/** Where a provider's admin endpoints are (the record's `admin` field), when it serves them. */
export interface AdminAddress {
  readonly host: string;
  readonly port: number;
}

/** One method's cumulative figures in a `/stats` answer. */
export interface MethodStats {
  readonly side: 'provider' | 'consumer';
  readonly service: string;
  readonly version: string;
  readonly group: string;
  readonly method: string;
  readonly calls: number;
  readonly failures: number;
  readonly inFlight: number;
  /** Streams open now (a stream method that opened one; `/stats` `streams.open`). */
  readonly openStreams?: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number };
  /** The p99 of how long its calls waited between being read and running (`/stats` `queueMs.p99`). */
  readonly queueP99?: number;
  /** Min, max and mean of the latest window with calls (the one being filled, else the one before). */
  readonly window?: WindowStats;
  readonly lastFailure?: {
    readonly time: number;
    readonly code: string;
    readonly message: string;
    /** The reference the failure was quoted to its caller (and logged) under. */
    readonly ref?: string;
  };
}

/** One latency window of a `/stats` entry. */
export interface WindowStats {
  /** Its length, ms. */
  readonly ms: number;
  readonly calls: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

/** A reference as Callisto makes them (`<pid>-<n>`, base 36). */
const REF = /^[0-9a-z]{1,16}-[0-9a-z]{1,16}$/;

/** The window of a `/stats` entry's `latencyWindow` the page shows: the current one, else the previous. */
function windowOf(value: unknown): WindowStats | undefined {
  if (!isRecord(value)) return undefined;
  const chosen = [value['current'], value['previous']].find((w) => isRecord(w) && num(w['calls']) > 0);
  if (!isRecord(chosen)) return undefined;
  return {
    ms: num(value['ms']),
    calls: num(chosen['calls']),
    minMs: num(chosen['minMs']),
    maxMs: num(chosen['maxMs']),
    meanMs: num(chosen['meanMs']),
  };
}

export interface StatsAnswer {
  readonly time: number;
  readonly startTime: number;
  readonly methods: MethodStats[];
  /** The provider's adaptive concurrency limit, when it is on (`/stats` `adaptiveLimit`). */
  readonly adaptiveLimit?: AdaptiveLimitFigures;
}

/** A provider's adaptive concurrency limit as its `/stats` shows it. */
export interface AdaptiveLimitFigures {
  readonly limit: number;
  readonly inflight: number;
  readonly overloaded: boolean;
  readonly admitted: number;
  readonly refused: number;
  readonly loopDelayMs: number;
}

/** A method as the provider declares it (`/services`). */
export interface MethodDeclaration {
  readonly name: string;
  readonly idempotent?: boolean;
  readonly oneway?: boolean;
  readonly timeoutMs?: number;
  readonly hasSchema?: boolean;
  /** A stream method's kind. */
  readonly stream?: 'server' | 'client' | 'bidi';
}

export interface ServiceDeclaration {
  readonly service: string;
  readonly version: string;
  readonly group: string;
  readonly side: string;
  readonly methods: MethodDeclaration[];
}

export type { RegistryControl, ServiceOverrides } from '../registry/index.js';

/** An admin endpoint that could not be read: why, in words for the page. */
export class AdminReadError extends Error {
  override name = 'AdminReadError';
}

/** Largest admin answer read, bytes: a provider cannot make the dashboard buffer more. */
export const MAX_ADMIN_ANSWER_BYTES = 4 * 1024 * 1024;

/** The `admin` field of a record, when it is well formed. */
export function adminAddressOf(record: ProviderRecord): AdminAddress | undefined {
  const admin = (record as { admin?: unknown }).admin;
  if (typeof admin !== 'object' || admin === null) return undefined;
  const { host, port } = admin as { host?: unknown; port?: unknown };
  if (typeof host !== 'string' || host === '' || typeof port !== 'number' || !Number.isInteger(port)) {
    return undefined;
  }
  if (port < 1 || port > 65_535) return undefined;
  return { host, port };
}

export interface AdminReader {
  read(admin: AdminAddress, path: '/stats' | '/services' | '/config'): Promise<unknown>;
}

const hostOf = (host: string) => (host.includes(':') ? `[${host}]` : host);

export function createAdminReader(options: { token: string | undefined; timeoutMs: number }): AdminReader {
  return {
    async read(admin, path) {
      const url = `http://${hostOf(admin.host)}:${admin.port}${path}`;
      let response: Response;
      try {
        response = await fetch(url, {
          headers: {
            accept: 'application/json',
            ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
          },
          signal: AbortSignal.timeout(options.timeoutMs),
          // a redirect would take the token to an address nobody checked
          redirect: 'error',
        });
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        const why =
          (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : cause;
        throw new AdminReadError(`cannot reach ${url}: ${why ?? (error as Error).message}`);
      }
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        throw new AdminReadError(`${url} refused the dashboard (${response.status}): give --admin-token`);
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new AdminReadError(`${url} answered ${response.status}`);
      }
      const text = await readCapped(response, MAX_ADMIN_ANSWER_BYTES, url);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new AdminReadError(`${url} answered something that is not JSON`);
      }
    },
  };
}

async function readCapped(response: Response, maxBytes: number, url: string): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new AdminReadError(`${url} answered more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A `/stats` answer, entries of the wrong shape left out. */
export function parseStats(data: unknown): StatsAnswer {
  if (!isRecord(data) || !Array.isArray(data['methods'])) {
    throw new AdminReadError('the /stats answer has no "methods" list');
  }
  const methods: MethodStats[] = [];
  for (const entry of data['methods']) {
    if (!isRecord(entry) || typeof entry['method'] !== 'string' || typeof entry['service'] !== 'string')
      continue;
    const latency = isRecord(entry['latencyMs']) ? entry['latencyMs'] : {};
    const failure = isRecord(entry['lastFailure']) ? entry['lastFailure'] : undefined;
    const window = windowOf(entry['latencyWindow']);
    const streams = isRecord(entry['streams']) ? entry['streams'] : undefined;
    const queue = isRecord(entry['queueMs']) ? entry['queueMs'] : undefined;
    const ref = failure === undefined ? '' : str(failure['ref']);
    methods.push({
      side: entry['side'] === 'consumer' ? 'consumer' : 'provider',
      service: entry['service'],
      version: str(entry['version']),
      group: str(entry['group']),
      method: entry['method'],
      calls: num(entry['calls']),
      failures: num(entry['failures']),
      inFlight: num(entry['inFlight']),
      ...(streams === undefined ? {} : { openStreams: num(streams['open']) }),
      latencyMs: { p50: num(latency['p50']), p99: num(latency['p99']) },
      ...(queue === undefined ? {} : { queueP99: num(queue['p99']) }),
      ...(window === undefined ? {} : { window }),
      ...(failure === undefined
        ? {}
        : {
            lastFailure: {
              time: num(failure['time']),
              code: str(failure['code']),
              message: str(failure['message']).slice(0, 1000),
              ...(REF.test(ref) ? { ref } : {}),
            },
          }),
    });
  }
  const limit = isRecord(data['adaptiveLimit']) ? data['adaptiveLimit'] : undefined;
  return {
    time: num(data['time']) || Date.now(),
    startTime: num(data['startTime']),
    methods,
    ...(limit === undefined
      ? {}
      : {
          adaptiveLimit: {
            limit: num(limit['limit']),
            inflight: num(limit['inflight']),
            overloaded: limit['overloaded'] === true,
            admitted: num(limit['admitted']),
            refused: num(limit['refused']),
            loopDelayMs: num(limit['loopDelayMs']),
          },
        }),
  };
}

/** The declarations in a `/services` answer (a list, or `{ services: [...] }`). */
export function parseServices(data: unknown): ServiceDeclaration[] {
  const list = Array.isArray(data)
    ? data
    : isRecord(data) && Array.isArray(data['services'])
      ? data['services']
      : [];
  const out: ServiceDeclaration[] = [];
  for (const entry of list) {
    if (!isRecord(entry) || typeof entry['service'] !== 'string') continue;
    const methods = Array.isArray(entry['methods']) ? entry['methods'] : [];
    out.push({
      service: entry['service'],
      version: str(entry['version']),
      group: str(entry['group']),
      side: str(entry['side']) || 'provider',
      methods: methods.filter(isRecord).flatMap((m) =>
        typeof m['name'] === 'string'
          ? [
              {
                name: m['name'],
                idempotent: m['idempotent'] === true,
                oneway: m['oneway'] === true,
                ...(typeof m['timeoutMs'] === 'number' ? { timeoutMs: m['timeoutMs'] } : {}),
                hasSchema: m['hasSchema'] === true,
                ...(m['stream'] === 'server' || m['stream'] === 'client' || m['stream'] === 'bidi'
                  ? { stream: m['stream'] }
                  : {}),
              },
            ]
          : [],
      ),
    });
  }
  return out;
}

/**
 * The registry's runtime control (`createRegistryControl` of `callisto/registry`), opening registries
 * with `open` (the app's extensions: user registry kinds work).
 */
export function controlFactory(
  open: (address: string) => Promise<Registry>,
): (address: string) => RegistryControl {
  return (address) =>
    createRegistryControl(address, {
      open: (at: string | RegistryAddress) => open(typeof at === 'string' ? at : at.raw),
    });
}

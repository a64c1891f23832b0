/**
 * The dashboard's options, their defaults in one place, and the one function that checks and fills them.
 * A mistake fails at start with the option, the value and what was expected.
 */

export interface DashboardOptions {
  /** Registry addresses to show (at least one). */
  readonly registries: readonly string[];
  /** Where the page is served. Default `127.0.0.1` (this machine only). */
  readonly host?: string;
  /** Port of the page; 0 picks a free one. Default 7070. */
  readonly port?: number;
  /** When set, every API request needs `Authorization: Bearer <token>` (the page asks for it). */
  readonly token?: string | undefined;
  /** Sent as `Authorization: Bearer <adminToken>` to the providers' admin endpoints. */
  readonly adminToken?: string | undefined;
  /** How often the registries' service lists and the providers' `/stats` are read, ms. Default 1000. */
  readonly refreshMs?: number;
  /** How long an answer from a provider's admin endpoint may take, ms. Default 2000. */
  readonly adminTimeoutMs?: number;
  /** Largest request body the API reads (a Try it call's arguments), bytes. Default 65536. */
  readonly maxBodyBytes?: number;
  /** Time a connection has to send a request's headers, ms (then 408, closed). Default 10000. */
  readonly headersTimeoutMs?: number;
  /** Time a request's body has to arrive once its headers did, ms (then 408, closed). Default 10000. */
  readonly bodyTimeoutMs?: number;
  /** Connections at once; more are closed as they arrive. Default 128. */
  readonly maxConnections?: number;
  /**
   * Connections at once from one remote address, so that one client's idle connections cannot shut
   * the others out (a browser opens about 6 per page). Default 32.
   */
  readonly maxConnectionsPerAddress?: number;
  /** Timeout of a call made from the page when it names none, ms. Default 5000. */
  readonly callTimeoutMs?: number;
  /**
   * Host names the page may be opened by besides loopback names and addresses (`name` or `name:port`),
   * e.g. `dashboard.example.com`: any other name in a request's Host is refused (DNS rebinding).
   * Default none.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Admin endpoints the dashboard may ask (`host` or `host:port`) besides those on the host of the
   * provider record that names them; its admin token goes nowhere else. Default none.
   */
  readonly adminAllow?: readonly string[];
  /** Serve the page over HTTPS (dashboard-listener.ts). Default: plain HTTP. */
  readonly tls?: DashboardTlsOptions | undefined;
  /** Only show: no actions, no Try it (the API refuses them). Default false. */
  readonly readOnly?: boolean;
}

/** The dashboard's own TLS: each value PEM text (it contains `-----BEGIN`) or the path of a file. */
export interface DashboardTlsOptions {
  /** The private key of `cert`. */
  readonly key: string;
  /** The certificate chain served. */
  readonly cert: string;
  /** CA certificates signing the client certificates the dashboard then asks for and requires. Default none. */
  readonly ca?: string | undefined;
  /** How often the files are checked for changes, ms (a change reloads them); 0 never. Default 2000. */
  readonly reloadIntervalMs?: number;
}

export interface ResolvedDashboardOptions {
  readonly registries: readonly string[];
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly adminToken: string | undefined;
  readonly refreshMs: number;
  readonly adminTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  readonly callTimeoutMs: number;
  readonly allowedHosts: readonly string[];
  readonly adminAllow: readonly string[];
  readonly tls: DashboardTlsOptions | undefined;
  readonly readOnly: boolean;
}

export const DEFAULT_DASHBOARD_OPTIONS = {
  host: '127.0.0.1',
  port: 7070,
  refreshMs: 1_000,
  adminTimeoutMs: 2_000,
  maxBodyBytes: 64 * 1024,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  maxConnections: 128,
  maxConnectionsPerAddress: 32,
  callTimeoutMs: 5_000,
  tlsReloadIntervalMs: 2_000,
  tlsHandshakeTimeoutMs: 10_000,
} as const;

/** The longest timeout a call from the page may ask for, ms. */
export const MAX_CALL_TIMEOUT_MS = 60_000;

/** A dashboard option with a wrong value. */
export class DashboardOptionError extends Error {
  override name = 'DashboardOptionError';
  constructor(
    readonly option: string,
    value: unknown,
    expected: string,
  ) {
    super(`invalid dashboard option ${option} = ${JSON.stringify(value)}: expected ${expected}`);
  }
}

type NumericOption = Exclude<keyof DashboardOptions & keyof typeof DEFAULT_DASHBOARD_OPTIONS, 'host'>;

function integer(option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new DashboardOptionError(option, value, `an integer from ${min} to ${max}`);
  }
  return value;
}

export function resolveDashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  const registries = [...options.registries];
  if (registries.length === 0) {
    throw new DashboardOptionError('registries', registries, 'at least one registry address');
  }
  const token = options.token;
  if (token !== undefined && (token.length < 8 || /\s/.test(token))) {
    throw new DashboardOptionError('token', '<hidden>', 'at least 8 characters without spaces');
  }
  const host = options.host ?? DEFAULT_DASHBOARD_OPTIONS.host;
  if (host.trim() === '' || /\s/.test(host))
    throw new DashboardOptionError('host', host, 'a host name or IP');
  const allowedHosts = hostList('allowedHosts', options.allowedHosts);
  const adminAllow = hostList('adminAllow', options.adminAllow);
  const tls = options.tls;
  if (tls !== undefined && (tls.key === '' || tls.cert === '')) {
    throw new DashboardOptionError(
      tls.key === '' ? 'tls.key' : 'tls.cert',
      '',
      'PEM text or a file path: TLS needs both the key and the certificate',
    );
  }
  const readOnly = options.readOnly ?? false;
  /** A numeric option, its default filled in, checked against its range. */
  const number = (option: NumericOption, min: number, max: number): number =>
    integer(option, options[option] ?? DEFAULT_DASHBOARD_OPTIONS[option], min, max);
  checkExposure(host, { token: token !== undefined, tls, readOnly });
  return {
    registries,
    host,
    allowedHosts,
    adminAllow,
    tls,
    readOnly,
    port: number('port', 0, 65_535),
    token,
    adminToken: options.adminToken,
    refreshMs: number('refreshMs', 100, 60_000),
    adminTimeoutMs: number('adminTimeoutMs', 100, 60_000),
    maxBodyBytes: number('maxBodyBytes', 1024, 16 * 1024 * 1024),
    headersTimeoutMs: number('headersTimeoutMs', 10, 600_000),
    bodyTimeoutMs: number('bodyTimeoutMs', 10, 600_000),
    maxConnections: number('maxConnections', 1, 1_000_000),
    maxConnectionsPerAddress: number('maxConnectionsPerAddress', 1, 1_000_000),
    callTimeoutMs: number('callTimeoutMs', 1, MAX_CALL_TIMEOUT_MS),
  };
}

/** `name`, `name:port`, `[v6]` or `[v6]:port` entries, checked. */
function hostList(option: string, list: readonly string[] | undefined): readonly string[] {
  const out = [...(list ?? [])];
  for (const entry of out) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?$/.test(entry)) {
      throw new DashboardOptionError(option, entry, 'host names or addresses, each `host` or `host:port`');
    }
  }
  return out;
}

const LOOPBACK_BIND = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * What the dashboard needs before it listens beyond loopback: with actions (and Try it), TLS and a
 * token, since anyone who reaches it could disable providers; read-only, a token or client
 * certificates (TLS with a CA), since the page shows every provider's configuration.
 */
function checkExposure(
  host: string,
  given: { token: boolean; tls: DashboardTlsOptions | undefined; readOnly: boolean },
): void {
  if (LOOPBACK_BIND.test(host)) return;
  const clientCerts = given.tls?.ca !== undefined && given.tls.ca !== '';
  if (!given.readOnly && (given.tls === undefined || !given.token)) {
    throw new DashboardOptionError(
      'host',
      host,
      `a loopback address, or TLS and a token to serve actions beyond this machine (give --tls-cert and --tls-key, and --token; or --read-only${given.token ? '' : ' with --token'})`,
    );
  }
  if (given.readOnly && !given.token && !clientCerts) {
    throw new DashboardOptionError(
      'host',
      host,
      'a loopback address, or a token (--token) or client certificates (--tls-ca) to show services beyond this machine',
    );
  }
}

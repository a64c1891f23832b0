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
  /** Timeout of a call made from the page when it names none, ms. Default 5000. */
  readonly callTimeoutMs?: number;
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
  readonly callTimeoutMs: number;
}

export const DEFAULT_DASHBOARD_OPTIONS = {
  host: '127.0.0.1',
  port: 7070,
  refreshMs: 1_000,
  adminTimeoutMs: 2_000,
  maxBodyBytes: 64 * 1024,
  callTimeoutMs: 5_000,
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
  return {
    registries,
    host,
    port: integer('port', options.port ?? DEFAULT_DASHBOARD_OPTIONS.port, 0, 65_535),
    token,
    adminToken: options.adminToken,
    refreshMs: integer('refreshMs', options.refreshMs ?? DEFAULT_DASHBOARD_OPTIONS.refreshMs, 100, 60_000),
    adminTimeoutMs: integer(
      'adminTimeoutMs',
      options.adminTimeoutMs ?? DEFAULT_DASHBOARD_OPTIONS.adminTimeoutMs,
      100,
      60_000,
    ),
    maxBodyBytes: integer(
      'maxBodyBytes',
      options.maxBodyBytes ?? DEFAULT_DASHBOARD_OPTIONS.maxBodyBytes,
      1024,
      16 * 1024 * 1024,
    ),
    callTimeoutMs: integer(
      'callTimeoutMs',
      options.callTimeoutMs ?? DEFAULT_DASHBOARD_OPTIONS.callTimeoutMs,
      1,
      MAX_CALL_TIMEOUT_MS,
    ),
  };
}

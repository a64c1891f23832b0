/**
 * The `admin.*` keys of the app's configuration: the admin endpoints (health, readiness, metrics,
 * services, configuration, stats) on a port of their own, off unless enabled. Declared here;
 * config/callisto-config.ts composes them, docs/configuration.md is generated from the comments.
 */
import { z } from 'zod';

export const adminTlsConfigSchema = z.strictObject({
  /** The admin port's private key: PEM text or a file path; with `cert`, the admin port serves HTTPS only. Default ''. */
  key: z.string(),
  /** The admin port's certificate chain: PEM text or a file path. Default ''. */
  cert: z.string(),
});

export const adminConfigSchema = z.strictObject({
  /** Serve the admin endpoints (/health, /ready, /metrics, /services, /config, /stats; docs/observability.md) on a free port; setting `admin.port` serves them too. Default false. */
  enabled: z.boolean(),
  /** Interface the admin port listens on; loopback unless you mean other hosts to reach it (then set a token). Default '127.0.0.1'. */
  host: z.string().min(1),
  /** Admin port; a port turns the admin endpoints on, 0 leaves them off unless `admin.enabled` (then a free port is picked). Default 0. */
  port: z.number().int().min(0).max(65535),
  /** When set, every admin request needs `Authorization: Bearer <token>`; '' for none. Default ''. */
  token: z.string(),
  /** Admin connections at once; more are closed as they arrive. Default 64. */
  maxConnections: z.number().int().min(1),
  /** Admin connections at once from one remote address, so that one client cannot take every place (and fail /health). Default 8. */
  maxConnectionsPerAddress: z.number().int().min(1),
  /** Time a connection has to send a request's headers (an idle connection is closed after it), ms. Default 5000. */
  headersTimeoutMs: z.number().int().min(10),
  /** Serve the admin endpoints over HTTPS: the private key and certificate chain, PEM text or file paths (both or neither). */
  tls: adminTlsConfigSchema,
});

export type AdminConfig = z.infer<typeof adminConfigSchema>;

/** Whether the app serves the admin endpoints: `admin.enabled`, or a port given. */
export function adminWanted(admin: AdminConfig): boolean {
  return admin.enabled || admin.port > 0;
}

export const DEFAULT_ADMIN_CONFIG: AdminConfig = {
  enabled: false,
  host: '127.0.0.1',
  port: 0,
  token: '',
  maxConnections: 64,
  maxConnectionsPerAddress: 8,
  headersTimeoutMs: 5_000,
  tls: { key: '', cert: '' },
};

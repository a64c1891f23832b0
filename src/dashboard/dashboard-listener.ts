/**
 * The dashboard's HTTP or HTTPS server, from its TLS options: the key, certificate and optional client
 * CA are PEM text or files (read and checked at start, so a bad file fails there, naming the option),
 * and files are re-read when they change (`reloadIntervalMs`): new connections use the new ones, open
 * connections stay (http/http-server-tls.ts does the serving, as for every HTTP listener of an app;
 * this file checks the dashboard's own options and names them in its errors).
 */
import type http from 'node:http';
import tls from 'node:tls';
import type { Logger } from '../index.js';
import { createHttpServer, type PemSource, pemSource, readPem } from '../internal.js';
import {
  DashboardOptionError,
  type DashboardTlsOptions,
  DEFAULT_DASHBOARD_OPTIONS,
} from './dashboard-options.js';

export interface DashboardListener {
  readonly server: http.Server;
  readonly scheme: 'http' | 'https';
  /** Stops watching the files (the server is closed by its owner). */
  close(): void;
}

interface Sources {
  readonly key: PemSource;
  readonly cert: PemSource;
  readonly ca: PemSource | undefined;
}

const contextOf = (sources: Sources): tls.SecureContextOptions => ({
  key: readPem(sources.key),
  cert: readPem(sources.cert),
  ...(sources.ca ? { ca: readPem(sources.ca) } : {}),
});

/** The PEM sources, read and loaded once: a wrong file fails now with the option that names it. */
function checkedSources(options: DashboardTlsOptions): Sources {
  const source = (option: string, value: string): PemSource => {
    const pem = pemSource(value)!;
    try {
      readPem(pem);
    } catch (error) {
      throw new DashboardOptionError(
        option,
        'file' in pem ? pem.file : '(PEM text)',
        `PEM text or a readable file (${(error as Error).message})`,
      );
    }
    return pem;
  };
  const sources: Sources = {
    key: source('tls.key', options.key),
    cert: source('tls.cert', options.cert),
    ca: options.ca ? source('tls.ca', options.ca) : undefined,
  };
  try {
    tls.createSecureContext(contextOf(sources));
  } catch (error) {
    throw new DashboardOptionError(
      'tls.cert',
      'file' in sources.cert ? sources.cert.file : '(PEM text)',
      `a certificate whose private key is tls.key, in PEM form (${(error as Error).message})`,
    );
  }
  return sources;
}

export function createDashboardListener(
  options: DashboardTlsOptions | undefined,
  handler: http.RequestListener,
  log: (message: string) => void,
): DashboardListener {
  const logger: Logger = {
    debug() {},
    info: (message) => log(`dashboard: ${message}`),
    warn: (message) => log(`dashboard: ${message}`),
    error: (message) => log(`dashboard: ${message}`),
  };
  const sources = options === undefined ? undefined : checkedSources(options);
  const served = createHttpServer({
    http: {},
    tls:
      sources === undefined
        ? undefined
        : {
            ...sources,
            // with a client CA: only clients with a certificate it signed get past the handshake
            requestCert: sources.ca !== undefined,
            rejectUnauthorized: true,
            reloadIntervalMs: options?.reloadIntervalMs ?? DEFAULT_DASHBOARD_OPTIONS.tlsReloadIntervalMs,
            handshakeTimeoutMs: DEFAULT_DASHBOARD_OPTIONS.tlsHandshakeTimeoutMs,
          },
    logger,
    where: () => 'the dashboard',
  });
  served.server.on('request', handler);
  return { server: served.server, scheme: served.scheme, close: () => served.close() };
}

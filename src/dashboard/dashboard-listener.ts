/**
 * The dashboard's HTTP or HTTPS server, from its TLS options: the key, certificate and optional client
 * CA are PEM text or files (read and checked at start, so a bad file fails there, naming the option),
 * and files are re-read when they change (`reloadIntervalMs`): new connections use the new ones, open
 * connections stay. One small file, so that a shared HTTP toolkit can replace it.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { type PemSource, pemSource, readPem } from '../transport/tls-options.js';
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

const stampOf = (sources: Sources): string =>
  [sources.key, sources.cert, sources.ca]
    .flatMap((source) => (source && 'file' in source ? [source.file] : []))
    .map((file) => {
      try {
        const stat = fs.statSync(file);
        return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');

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
  if (options === undefined) {
    return { server: http.createServer(handler), scheme: 'http', close() {} };
  }
  const sources = checkedSources(options);
  const server = https.createServer(
    {
      ...contextOf(sources),
      // with a client CA: only clients with a certificate it signed get past the handshake
      ...(sources.ca ? { requestCert: true, rejectUnauthorized: true } : {}),
    },
    handler,
  );
  const every = options.reloadIntervalMs ?? DEFAULT_DASHBOARD_OPTIONS.tlsReloadIntervalMs;
  let seen = stampOf(sources);
  const timer =
    every > 0
      ? setInterval(() => {
          const stamp = stampOf(sources);
          if (stamp === seen) return;
          seen = stamp;
          try {
            const next = contextOf(sources);
            tls.createSecureContext(next);
            server.setSecureContext(next);
            log('dashboard: TLS certificates reloaded; new connections use them');
          } catch (error) {
            log(
              `dashboard: TLS certificates not reloaded (keeping those in use): ${(error as Error).message}`,
            );
          }
        }, every)
      : undefined;
  timer?.unref();
  return { server, scheme: 'https', close: () => clearInterval(timer) };
}

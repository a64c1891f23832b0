/**
 * `createDashboard()`: the dashboard's HTTP server. The page (assets.ts) and a JSON API it polls:
 *
 *   GET  /api/overview                      registries and every service key
 *   GET  /api/service?name=&version=&group= one service: methods, providers, consumers, live figures
 *   GET  /api/config?name=&version=&group=  each provider's `/config`
 *   POST /api/call                          a call from the page (try-call.ts)
 *   POST /api/action                        disable, enable, weight, mock (actions.ts)
 *
 * With a token, every API request needs `Authorization: Bearer <token>`; the page's files carry no data
 * and are served to anyone who can reach the port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallistoApp } from '../index.js';
import { createRegistry, type Registry } from '../registry/index.js';
import { ActionInputError, type Actions, createActions } from './actions.js';
import { loadAssets } from './assets.js';
import { type DashboardOptions, resolveDashboardOptions } from './dashboard-options.js';
import {
  checkOrigin,
  createTokenCheck,
  HttpError,
  readJsonBody,
  sendError,
  sendJson,
} from './http-basics.js';
import { createRegistryWatch, type RegistryWatch } from './registry-watch.js';
import {
  configView,
  createDeclarations,
  keysNamed,
  overview,
  providersOf,
  serviceView,
  type ViewContext,
} from './service-view.js';
import { controlFactory, createAdminReader, type RegistryControl } from './sources.js';
import { createStatsFeed } from './stats-feed.js';
import { createTryCaller, TryInputError } from './try-call.js';

export interface Dashboard {
  /** `http://host:port/`. */
  readonly url: string;
  readonly port: number;
  readonly watch: RegistryWatch;
  close(): Promise<void>;
}

export interface DashboardDependencies {
  /** The app calls from the page go through (its registries are the dashboard's). */
  readonly app: CallistoApp;
  /** Replaces the registry's runtime control; default `createRegistryControl` of `callisto/registry`. */
  readonly control?: ((address: string) => RegistryControl) | undefined;
  /** Where registry warnings go. */
  readonly log?: (message: string) => void;
}

export async function createDashboard(
  options: DashboardOptions,
  deps: DashboardDependencies,
): Promise<Dashboard> {
  const resolved = resolveDashboardOptions(options);
  const assets = loadAssets();
  const registries: Array<{ address: string; registry: Registry }> = [];
  const log = deps.log ?? (() => {});
  const openRegistry = (address: string) =>
    createRegistry(
      address,
      { ttlMs: deps.app.config.registryTtlMs, log: (level, message) => level !== 'info' && log(message) },
      deps.app.extensions,
    );
  try {
    for (const address of resolved.registries) {
      registries.push({ address, registry: await openRegistry(address) });
    }
  } catch (error) {
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
    throw error;
  }
  const watch = createRegistryWatch(registries, resolved.refreshMs);
  const admin = createAdminReader({ token: resolved.adminToken, timeoutMs: resolved.adminTimeoutMs });
  const stats = createStatsFeed(admin, resolved.refreshMs);
  const actions: Actions = createActions(deps.control ?? controlFactory(openRegistry));
  const context: ViewContext = { watch, stats, admin, actions, warmupMs: deps.app.config.consumer.warmupMs };
  const declarations = createDeclarations(admin);
  const caller = createTryCaller(deps.app, resolved.callTimeoutMs);
  const authorized = createTokenCheck(resolved.token);

  const query = (url: URL) => {
    const name = url.searchParams.get('name');
    if (name === null || name === '') throw new HttpError(400, 'give the service: ?name=<service>');
    return {
      name,
      version: url.searchParams.get('version') ?? undefined,
      group: url.searchParams.get('group') ?? undefined,
    };
  };

  const api = async (request: http.IncomingMessage, url: URL): Promise<unknown> => {
    const route = `${request.method} ${url.pathname}`;
    switch (route) {
      case 'GET /api/session':
        return { ok: true, token: resolved.token !== undefined };
      case 'GET /api/overview':
        return overview(context);
      case 'GET /api/service': {
        const { name, version, group } = query(url);
        return serviceView(context, declarations, name, version, group);
      }
      case 'GET /api/config': {
        const { name, version, group } = query(url);
        return configView(context, name, version, group);
      }
      case 'POST /api/call':
        return caller.call(await readJsonBody(request, resolved.maxBodyBytes));
      case 'POST /api/action': {
        const body = await readJsonBody(request, resolved.maxBodyBytes);
        const { service, version, group } = (body ?? {}) as Record<string, unknown>;
        if (typeof service !== 'string') throw new HttpError(400, '"service" must be a string');
        const [watched] = keysNamed(
          context,
          service,
          typeof version === 'string' ? version : '1.0.0',
          typeof group === 'string' ? group : '',
        );
        const action = actions.check(
          body,
          providersOf(watched!).map((p) => `${p.host}:${p.port}`),
        );
        await actions.apply(
          action,
          watched!.lists.map((list) => list.registry),
        );
        return { ok: true };
      }
      default:
        throw new HttpError(404, `no such API: ${route}`);
    }
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://dashboard');
    void (async () => {
      try {
        checkOrigin(request, resolved.host);
        if (!url.pathname.startsWith('/api/')) {
          if (request.method === 'GET' && assets.serve(url.pathname, response)) return;
          throw new HttpError(404, `not found: ${url.pathname}`);
        }
        if (!authorized(request)) throw new HttpError(401, 'this dashboard needs its token');
        sendJson(response, 200, await api(request, url));
      } catch (error) {
        if (response.headersSent) {
          response.destroy();
          return;
        }
        if (error instanceof HttpError) sendError(response, error);
        else if (error instanceof TryInputError || error instanceof ActionInputError) {
          sendError(response, new HttpError(400, error.message));
        } else {
          log(`dashboard: ${request.method} ${url.pathname} failed: ${(error as Error).message}`);
          sendError(response, new HttpError(500, (error as Error).message));
        }
      }
    })();
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxHeadersCount = 100;

  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    stats.close();
    await watch.close();
    await actions.close();
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
  };

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(resolved.port, resolved.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    stats.close();
    await watch.close();
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new Error(`port ${resolved.port} on ${resolved.host} is in use: give another with --port`);
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}/`,
    port,
    watch,
    close: () => (closing ??= close()),
  };
}

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
 * and are served to anyone who can reach the port. Every request's Host must be one of the dashboard's
 * names (DNS rebinding), and a POST must carry the token or the page's secret (http-basics.ts), which
 * only the page's own script can read. docs/dashboard.md, "Security".
 */
import type http from 'node:http';
import type { CallistoApp } from '../index.js';
import type { HttpListener } from '../internal.js';
import { createBearerCheck, createBodyReader, sendJson } from '../internal.js';
import { createRegistry, type Registry } from '../registry/index.js';
import { ActionInputError, type Actions, createActions } from './actions.js';
import { createAddressScrub } from './address-scrub.js';
import { createAdminGate } from './admin-gate.js';
import { loadAssets } from './assets.js';
import { createDashboardListener } from './dashboard-listener.js';
import { type DashboardOptions, resolveDashboardOptions } from './dashboard-options.js';
import {
  checkOrigin,
  createHostCheck,
  createPageSecret,
  HttpError,
  readJsonBody,
  sendError,
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
  /** `http://host:port/` (`https://` with TLS). */
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
  const secret = createPageSecret();
  const assets = loadAssets(undefined, { secret: secret.value, readOnly: resolved.readOnly });
  const registries: Array<{ address: string; registry: Registry }> = [];
  const scrub = createAddressScrub(resolved.registries);
  const log = (message: string) => deps.log?.(scrub(message));
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
  const gate = createAdminGate(resolved.adminAllow);
  const stats = createStatsFeed(admin, gate, resolved.refreshMs);
  const actions: Actions = createActions(deps.control ?? controlFactory(openRegistry));
  const context: ViewContext = {
    watch,
    stats,
    admin,
    gate,
    actions,
    warmupMs: deps.app.config.consumer.warmupMs,
  };
  const declarations = createDeclarations(admin, gate);
  const caller = createTryCaller(deps.app, resolved.callTimeoutMs);
  const authorized = createBearerCheck(resolved.token);
  const bodies = createBodyReader(resolved, 'dashboard');
  const hostAllowed = createHostCheck(resolved.host, resolved.allowedHosts);
  /** A request that changes something: the token when there is one, else the page's secret. */
  const mayChange = (request: http.IncomingMessage) =>
    resolved.token !== undefined ? authorized(request) : secret.check(request);

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
        return { ok: true, token: resolved.token !== undefined, readOnly: resolved.readOnly };
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
      case 'POST /api/call': {
        const body = await readJsonBody(request, bodies, resolved.maxBodyBytes);
        const { service, version, group } = (body ?? {}) as Record<string, unknown>;
        // only the services the registries list: a name of the page's choosing subscribes to nothing
        if (typeof service === 'string') {
          keysNamed(
            context,
            service,
            typeof version === 'string' ? version : '1.0.0',
            typeof group === 'string' ? group : '',
          );
        }
        return caller.call(body);
      }
      case 'POST /api/action': {
        const body = await readJsonBody(request, bodies, resolved.maxBodyBytes);
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

  let scheme: 'http' | 'https' = 'http';
  const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://dashboard');
    void (async () => {
      try {
        checkOrigin(request, hostAllowed, scheme);
        if (!url.pathname.startsWith('/api/')) {
          if (request.method === 'GET' && assets.serve(url.pathname, response)) return;
          throw new HttpError(404, `not found: ${url.pathname}`);
        }
        if (!authorized(request)) throw new HttpError(401, 'this dashboard needs its token');
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          if (resolved.readOnly) throw new HttpError(403, 'this dashboard is read-only (--read-only)');
          if (!mayChange(request)) {
            throw new HttpError(
              403,
              "a change needs the dashboard's token or its page's secret (x-callisto-page): make it from the dashboard's own page",
            );
          }
        }
        sendJson(response, 200, await api(request, url), { scrub });
      } catch (error) {
        if (response.headersSent) {
          response.destroy();
          return;
        }
        if (error instanceof HttpError) sendError(request, response, error, scrub);
        else if (error instanceof TryInputError || error instanceof ActionInputError) {
          sendError(request, response, new HttpError(400, error.message), scrub);
        } else {
          log(`dashboard: ${request.method} ${url.pathname} failed: ${(error as Error).message}`);
          sendError(request, response, new HttpError(500, (error as Error).message), scrub);
        }
      }
    })();
  };
  let listener: HttpListener;
  try {
    listener = createDashboardListener(resolved, handle, log);
  } catch (error) {
    stats.close();
    await watch.close();
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
    throw error;
  }
  scheme = listener.scheme;

  const close = async () => {
    await listener.close(0);
    bodies.close();
    await caller.close();
    stats.close();
    await watch.close();
    await actions.close();
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
  };

  try {
    await listener.listen();
  } catch (error) {
    await listener.close(0);
    bodies.close();
    stats.close();
    await watch.close();
    await Promise.allSettled(registries.map(({ registry }) => registry.close()));
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new Error(`port ${resolved.port} on ${resolved.host} is in use: give another with --port`);
    throw error;
  }
  const port = listener.port;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  let closing: Promise<void> | undefined;
  return {
    url: `${scheme}://${host}:${port}/`,
    port,
    watch,
    close: () => (closing ??= close()),
  };
}

/**
 * The standalone HTTP gateway: `createGateway({ registry, port })` takes the same HTTP/JSON requests as
 * a provider's entry (`POST /<service>/<method>`, docs/http.md) and routes each to the providers a
 * registry lists, through a consumer reference built from the service name: the app's load balancing,
 * failover, outlier detection and consumer filters apply, and the call travels to a provider over
 * Callisto's own protocol (where the provider's filters run). Bodies are bounded as on the entry (size,
 * timeouts, elements and depth counted before decoding, `__proto__` refused), connections are capped in
 * all and per client address, and every call carries its HTTP client's address to the provider
 * (attachment `callisto-forwarded-client`, honoured by providers that list the gateway in
 * `server.trustedGateways`), so that the providers' per-address limits stay per client.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AppOptions, type CallistoApp, callisto } from '../app/callisto-app.js';
import { withOptions } from '../consumer/with-options.js';
import { ConfigError } from '../core/config-error.js';
import { type ErrorCodeName, messageOf, RpcError } from '../core/rpc-error.js';
import { createConnectionCaps } from '../http/connection-caps.js';
import { sendError, sendRefusal, sendResult } from '../http/http-answer.js';
import { createBodyReader } from '../http/http-body.js';
import { createHttpListener, type HttpListener, remoteOf } from '../http/http-listener.js';
import { type HttpOptions, httpOptionsFrom } from '../http/http-options.js';
import { HttpRefusal, readCallTarget } from '../http/http-request.js';
import { listenerTls } from '../http/listener-tls.js';
import type { ListenerTlsConfig } from '../http/listener-tls-config.js';
import { UNCOMPRESSED } from '../protocol/compression.js';
import { createArgumentsReader } from '../provider/arguments-reader.js';
import { FORWARDED_CLIENT_ATTACHMENT } from '../provider/forwarded-client.js';
import { createGatewayRoutes } from './gateway-routes.js';

export interface GatewayOptions extends Partial<Omit<HttpOptions, 'tls' | 'plaintext'>> {
  /** Registry address(es) where the providers are (etcd://…, zookeeper://…, redis://…, file://…). */
  readonly registry: string | readonly string[];
  /** Version of a request that names none (`x-callisto-version`). Default '1.0.0'. */
  readonly defaultVersion?: string;
  /** Service keys routed at once; a request for one more is answered 503. Default 1000. */
  readonly maxServices?: number;
  /** HTTP connections at once; more are closed as they arrive. Default 4096. */
  readonly maxConnections?: number;
  /**
   * HTTP connections at once from one client address, so that one client's idle or half-open
   * connections cannot shut everyone else out (raise it behind a proxy that is one address). Default 256.
   */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Serve HTTPS: the gateway's private key and certificate chain, PEM text or file paths (both or
   * neither). Default none (plain HTTP).
   */
  readonly tls?: ListenerTlsConfig;
  /** Calls in flight at once; more are answered 503 (Overloaded). Default 10000. */
  readonly maxConcurrentCalls?: number;
  /**
   * The gateway's app (consumer settings such as `consumer.loadbalance`, `consumer.timeoutMs`,
   * `maxDecodedElements`, consumer filters, a logger). Its `registry` is the one above.
   */
  readonly app?: Omit<AppOptions, 'registry'>;
}

export interface Gateway {
  /** The HTTP port listened on. */
  readonly port: number;
  readonly host: string;
  /** The consumer app the calls go through. */
  readonly app: CallistoApp;
  /** Stops taking connections, answers what is in flight (bounded), closes the app. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const positive = (value: number | undefined, fallback: number, key: string): number => {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1) {
    throw new ConfigError(`createGateway.${key}`, chosen, 'a positive integer');
  }
  return chosen;
};

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const registry = typeof options.registry === 'string' ? [options.registry] : [...(options.registry ?? [])];
  if (registry.length === 0) {
    throw new ConfigError(
      'createGateway.registry',
      options.registry,
      'a registry address, e.g. etcd://127.0.0.1:2379',
    );
  }
  const http = httpOptionsFrom(
    {
      port: options.port ?? 0,
      host: options.host,
      maxBodyBytes: options.maxBodyBytes,
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    },
    'createGateway',
  );
  const maxServices = positive(options.maxServices, 1_000, 'maxServices');
  const maxConnections = positive(options.maxConnections, 4_096, 'maxConnections');
  const maxConnectionsPerAddress = positive(
    options.maxConnectionsPerAddress,
    256,
    'maxConnectionsPerAddress',
  );
  // checked now: a bad key or certificate fails createGateway, not its first connection
  const tls = listenerTls(options.tls, { where: 'createGateway.tls' });
  const maxCalls = positive(options.maxConcurrentCalls, 10_000, 'maxConcurrentCalls');
  const defaultVersion = options.defaultVersion ?? '1.0.0';
  const app = await callisto({ application: 'callisto-gateway', ...options.app, registry });
  const json = app.extensions.get('serializer', 'json');
  const routes = createGatewayRoutes(app, { maxServices, maxPendingLookups: 64 });
  const decodeLimits = { maxElements: app.config.maxDecodedElements };
  const bodies = createBodyReader(http, 'createGateway');
  const log = app.logger;
  const caps = createConnectionCaps({ maxConnections, maxConnectionsPerAddress }, 'createGateway');
  let calls = 0;

  const refused = (remote: string, reason: string): void => log.debug(`gateway refused ${remote}: ${reason}`);

  const fail = (response: ServerResponse, error: unknown): void => {
    if (RpcError.is(error)) {
      const code: ErrorCodeName = error.code;
      sendError(response, {
        json,
        code,
        payload: { name: error.remoteName ?? error.name, message: error.message, details: error.details },
      });
      return;
    }
    log.warn(`gateway: unexpected failure: ${messageOf(error)}`);
    sendError(response, {
      json,
      code: 'Internal',
      payload: { name: 'Error', message: 'the gateway failed', details: {} },
    });
  };

  const serve = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const remote = remoteOf(request.socket);
    let target: ReturnType<typeof readCallTarget>;
    let args: unknown[];
    let route: Awaited<ReturnType<typeof routes.route>>;
    try {
      target = readCallTarget(request);
      const body = await bodies.read(request);
      route = await routes.route({
        name: target.service,
        version: target.version ?? defaultVersion,
        group: target.group,
      });
      if (!route.methods.has(target.method)) {
        throw new HttpRefusal(
          404,
          'MethodNotFound',
          `${target.service} has no method "${target.method}" (the providers declare none of that name)`,
        );
      }
      const label = `${target.service}.${target.method}`;
      const reader = createArgumentsReader({ decode: decodeLimits, inflate: NO_INFLATE }, (reason) =>
        refused(remote, reason),
      );
      const measured = reader.measure(body, UNCOMPRESSED, json, label);
      if (typeof measured !== 'number') throw measured;
      args = reader.decode(json, label);
    } catch (error) {
      if (error instanceof HttpRefusal) {
        refused(remote, error.message);
        sendRefusal(response, json, error, !request.complete);
      } else fail(response, error);
      return;
    }
    if (calls >= maxCalls) {
      fail(
        response,
        new RpcError('Overloaded', `the gateway has ${maxCalls} calls in flight (maxConcurrentCalls)`),
      );
      return;
    }
    calls++;
    const abort = new AbortController();
    const onClose = (): void => {
      if (!response.writableFinished) abort.abort(new RpcError('Cancelled', 'the HTTP caller went away'));
    };
    response.once('close', onClose);
    try {
      const call = withOptions(route.reference, {
        signal: abort.signal,
        // the client's address for the providers' per-address limits, replacing any the client sent
        attachments: { ...target.attachments, [FORWARDED_CLIENT_ATTACHMENT]: remote },
        ...(target.timeoutMs > 0 ? { timeoutMs: target.timeoutMs } : {}),
      })[target.method]!;
      sendResult(response, json, await call(...args), undefined);
    } catch (error) {
      fail(response, error);
    } finally {
      calls--;
      response.off('close', onClose);
    }
  };

  const listener: HttpListener = createHttpListener({
    options: { ...http, tls },
    where: 'createGateway',
    logger: app.logger,
    caps,
    onRefused: refused,
    handle(request, response) {
      void serve(request, response);
    },
  });
  try {
    await listener.listen();
  } catch (error) {
    await app.close();
    throw error;
  }
  log.info(
    `gateway listening on ${options.tls === undefined ? 'http' : 'https'}://${http.host}:${listener.port} (registry ${registry.join(', ')})`,
  );

  let closing: Promise<void> | undefined;
  const gateway: Gateway = {
    get port() {
      return listener.port;
    },
    host: http.host,
    app,
    close() {
      closing ??= (async () => {
        listener.goAway();
        await listener.close(app.config.shutdownTimeoutMs);
        routes.close();
        bodies.close();
        await app.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => gateway.close(),
  };
  return gateway;
}

const NO_INFLATE = { enabled: false, maxBytes: 0, maxRatio: 1 } as const;

/**
 * A connection to a provider's HTTP/JSON entry (docs/http.md), for references with `protocol: 'http'`:
 * the same `ClientConnection` the pool holds for the framed protocol, behind the same endpoint, so
 * balancers, cluster strategies and filters above it are unchanged. One keep-alive agent (node:http or
 * node:https) per provider address; each call is one `POST /<service>/<method>`:
 *
 * What a request carries and how an answer is read: http-exchange.ts.
 *
 * - the arguments as a JSON array in the json serializer's tagged format (whatever the reference's
 *   serializer: the entry reads JSON), version and group as `x-callisto-version`/`x-callisto-group`;
 * - attachments as `x-callisto-attachment-<key>` headers (keys lower-cased, as HTTP has them), except
 *   `authorization`, `traceparent` and `tracestate`, which go as those headers (the consumer's
 *   credentials reach the provider's auth filter); values that cannot be header values are left out;
 * - the call id as `callisto-call-id`, the remaining budget as `x-callisto-timeout-ms` (and enforced
 *   here: at the deadline the request is aborted and the call fails with Timeout);
 * - an answer's status and `{"error":{code,name,message,details}}` body become the RpcError a framed
 *   answer would (same code, message, name and business error fields); response attachments come from
 *   `x-callisto-attachment-*` headers.
 *
 * Bounds: an answer's body larger than `maxFrameBytes` (`server.maxFrameBytes`, the consumer's frame
 * limit too) is refused (a declared content-length before a byte is read, a chunked one as it passes)
 * and the request destroyed; its elements are counted before it is decoded (`maxDecodedElements`).
 * A failure before the request reached the provider (connection refused, TLS handshake failed, connect
 * timeout) is never sent, so any method fails over; after, it is not. A connection that cannot be
 * reached is closed, so the pool backs off and reconnects as for TCP. No heartbeats: an HTTP
 * connection is never suspected.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import { messageOf, RpcError } from '../core/rpc-error.js';
import type { Serializer } from '../serialization/serializer.js';
import { type ClientTlsOptions, clientContextOptions } from '../transport/tls-options.js';
import {
  type ClientConnection,
  type ConnectionEvents,
  type ConnectionState,
  callBySending,
} from './connection.js';
import { answerOf, namesOf, requestHeaders } from './http-exchange.js';
import type { WireCall } from './pending-call.js';

/** The pseudo-transports of HTTP endpoints (their addresses read `http://host:port`, `https://host:port`). */
export const HTTP_TRANSPORTS = ['http', 'https'] as const;

export function isHttpTransport(name: string): name is (typeof HTTP_TRANSPORTS)[number] {
  return name === 'http' || name === 'https';
}

/**
 * Sockets one HTTP endpoint opens at most (calls beyond wait for one in node's agent, their deadlines
 * running): within a provider's `server.maxConnectionsPerAddress` (256) with room for other consumers.
 */
export const HTTP_MAX_SOCKETS = 64;

export interface HttpConnectionInit {
  readonly host: string;
  readonly port: number;
  /** HTTPS (a provider with `server.tls`), verified with the consumer's TLS options. */
  readonly secure: boolean;
  /** `consumer.tls`, resolved; required for `secure`. */
  readonly tls: ClientTlsOptions | undefined;
  /** The body format of the entry. */
  readonly json: Serializer;
  /** Largest answer body accepted, bytes. */
  readonly maxBodyBytes: number;
  readonly maxDecodedElements: number;
  /** How long opening a connection may take, ms. */
  readonly connectTimeoutMs: number;
  readonly events?: ConnectionEvents | undefined;
}

/** One call in flight: its request, and how it ends (once). */
interface Flight {
  readonly call: WireCall;
  readonly request: http.ClientRequest;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

const EMPTY = new Uint8Array(0);

export function createHttpConnection(init: HttpConnectionInit): ClientConnection {
  const { host, port, secure, json, events = {} } = init;
  const scheme = secure ? 'https' : 'http';
  const address = `${scheme}://${host}:${port}`;
  const flights = new Set<Flight>();
  let state: ConnectionState = { kind: 'connecting' };
  let lastCallAt = Date.now();
  let lastActivity = 0;
  const drainWaiters: Array<() => void> = [];
  let resolveReady: () => void = () => {};
  let rejectReady: (error: RpcError) => void = () => {};
  const readyPromise = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  readyPromise.catch(() => {});

  const noTls = secure && init.tls === undefined;
  const tlsOptions: tls.ConnectionOptions = {
    ...(init.tls ? clientContextOptions(init.tls) : {}),
    rejectUnauthorized: init.tls?.rejectUnauthorized ?? true,
    ...(init.tls?.servername ? { servername: init.tls.servername } : {}),
  };
  const agentOptions = { keepAlive: true, maxSockets: HTTP_MAX_SOCKETS };
  const agent = secure ? new https.Agent({ ...agentOptions, ...tlsOptions }) : new http.Agent(agentOptions);

  const noTlsError = (): RpcError =>
    new RpcError(
      'Network',
      `provider ${address} serves HTTPS and this consumer has no TLS configuration: set consumer.tls.ca (the CA that signed the provider's certificate; file or PEM), or consumer.tls.enabled: true to trust the system's CAs`,
      { neverSent: true },
    );

  const opened = (): void => {
    if (state.kind !== 'connecting') return;
    state = { kind: 'open' };
    resolveReady();
  };

  /** The provider cannot be reached: no new calls here; the pool backs off and reconnects. */
  const unreachable = (error: RpcError): void => {
    if (state.kind === 'closed') return;
    state = { kind: 'closed', error, local: false };
    rejectReady(error);
    events.onClose?.(connection, error, false);
    afterSettle();
  };

  const afterSettle = (): void => {
    if (flights.size > 0) return;
    lastCallAt = Date.now();
    for (const wake of drainWaiters.splice(0)) wake();
    // closed (unreachable): the pool let go of this connection; its calls ended, its sockets go too
    if (state.kind === 'closed') agent.destroy();
  };

  const settle = (flight: Flight, outcome: { value: unknown } | { error: RpcError }): void => {
    if (flight.settled) return;
    flight.settled = true;
    flights.delete(flight);
    if (flight.timer !== undefined) clearTimeout(flight.timer);
    if (flight.onAbort !== undefined) flight.call.signal?.removeEventListener('abort', flight.onAbort);
    if ('error' in outcome) flight.call.failed(outcome.error);
    else flight.call.answered(outcome.value);
    afterSettle();
  };

  /** Why `call` cannot be sent, or undefined; encodes its body into `encoded` when it can. */
  const refusal = (call: WireCall): RpcError | undefined => {
    if (state.kind === 'closed') return state.error;
    if (state.kind === 'draining')
      return new RpcError('Shutdown', `${address} is closing`, { neverSent: true });
    if (noTls) return noTlsError();
    if (call.signal?.aborted) return cancelled(call, true);
    try {
      encoded = json.encode(call.args);
    } catch (error) {
      return new RpcError(
        'Serialization',
        `cannot encode the arguments of ${call.route.label}: ${messageOf(error)}`,
        {
          cause: error,
          neverSent: true,
        },
      );
    }
    return undefined;
  };
  let encoded: Uint8Array = EMPTY;

  const send = (call: WireCall): void => {
    if (call.stream !== undefined) {
      call.failed(
        new RpcError(
          'BadRequest',
          `${call.route.label} is a stream: streams are not carried over HTTP yet (refer with protocol 'callisto')`,
          { neverSent: true },
        ),
      );
      return;
    }
    const refused = refusal(call);
    if (refused !== undefined) {
      call.failed(refused);
      return;
    }
    const body = encoded;
    encoded = EMPTY;
    const { service, method } = namesOf(call.route);
    lastCallAt = Date.now();
    const request = (secure ? https : http).request({
      agent,
      host,
      port,
      method: 'POST',
      path: `/${encodeURIComponent(service)}/${encodeURIComponent(method)}`,
      headers: requestHeaders(call, body.length),
    });
    const flight: Flight = { call, request, timer: undefined, onAbort: undefined, settled: false };
    flights.add(flight);
    const fail = (error: RpcError): void => {
      settle(flight, { error });
      request.destroy();
    };
    let connectTimer: NodeJS.Timeout | undefined;
    const written = (): void => {
      if (connectTimer !== undefined) clearTimeout(connectTimer);
      call.attempt.sent = true;
      opened();
      if (call.oneway) settle(flight, { value: undefined });
    };
    request.once('socket', (socket: Socket) => {
      // a kept-alive socket takes the request at once; a new one once connected (and its handshake done)
      if (request.reusedSocket) return written();
      connectTimer = setTimeout(() => {
        const error = new RpcError(
          'Network',
          `connect to ${address} timed out after ${init.connectTimeoutMs} ms`,
          {
            neverSent: true,
          },
        );
        fail(error);
        unreachable(error);
      }, init.connectTimeoutMs);
      connectTimer.unref();
      socket.once(secure ? 'secureConnect' : 'connect', written);
    });
    request.on('error', (error: Error & { code?: string }) => {
      if (connectTimer !== undefined) clearTimeout(connectTimer);
      if (flight.settled) return;
      const neverSent = !call.attempt.sent;
      const rpcError = new RpcError(
        'Network',
        `${neverSent ? `cannot connect to ${address}` : `request to ${address} failed`}: ${messageOf(error)}`,
        { cause: error, neverSent },
      );
      settle(flight, { error: rpcError });
      if (neverSent) unreachable(rpcError);
    });
    request.on('response', (response) => {
      lastActivity = Date.now();
      opened();
      if (flight.settled) {
        response.resume();
        return;
      }
      readBody(
        flight,
        response,
        (bodyBytes) =>
          settle(
            flight,
            answerOf({
              call,
              response,
              body: bodyBytes,
              json,
              maxDecodedElements: init.maxDecodedElements,
              address,
              refused: (reason) => events.onRefused?.(connection, reason),
            }),
          ),
        fail,
      );
    });
    const timeoutMs = call.attempt.timeoutMs;
    if (timeoutMs > 0 && !call.oneway) {
      flight.timer = setTimeout(
        () => fail(new RpcError('Timeout', `${call.route.label} timed out waiting for ${address}`)),
        timeoutMs,
      );
    }
    if (call.signal !== undefined) {
      flight.onAbort = () => fail(cancelled(call, !call.attempt.sent));
      call.signal.addEventListener('abort', flight.onAbort, { once: true });
    }
    request.end(body);
  };

  /** Reads an answer's body within `maxBodyBytes`; refuses (and destroys the request) beyond it. */
  const readBody = (
    flight: Flight,
    response: IncomingMessage,
    done: (body: Buffer) => void,
    fail: (error: RpcError) => void,
  ): void => {
    const limit = init.maxBodyBytes;
    const tooLarge = (size: string): void => {
      const reason = `the answer of ${flight.call.route.label} from ${address} is larger than the consumer's limit of ${limit} bytes (server.maxFrameBytes): ${size}`;
      events.onRefused?.(connection, `refused an answer from ${address}: ${reason}`);
      fail(new RpcError('Network', `refused: ${reason}`));
    };
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      tooLarge(`content-length ${declared}`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (flight.settled) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge(`more than ${limit} bytes arrived`);
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => {
      if (!flight.settled) done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    response.on('error', (error) => {
      if (!flight.settled) {
        fail(
          new RpcError(
            'Network',
            `the answer of ${flight.call.route.label} from ${address} failed: ${messageOf(error)}`,
            { cause: error },
          ),
        );
      }
    });
    response.once('aborted', () => {
      if (!flight.settled) {
        fail(
          new RpcError(
            'Network',
            `${address} closed the connection during the answer of ${flight.call.route.label}`,
          ),
        );
      }
    });
  };

  const destroy = (error?: RpcError): void => {
    const reason = error ?? new RpcError('Network', `connection to ${address} closed by this side`);
    const wasClosed = state.kind === 'closed';
    state = { kind: 'closed', error: reason, local: true };
    for (const flight of [...flights]) {
      settle(flight, { error: reason });
      flight.request.destroy();
    }
    agent.destroy();
    rejectReady(reason);
    if (!wasClosed) events.onClose?.(connection, reason, true);
  };

  const connection: ClientConnection = {
    address,
    get state() {
      return state;
    },
    get inFlight() {
      return flights.size;
    },
    openStreams: 0,
    suspected: false,
    get lastActivity() {
      return lastActivity;
    },
    get lastCallAt() {
      return lastCallAt;
    },
    heartbeatRttMs: 0,
    ready() {
      if (state.kind === 'open' || state.kind === 'draining') return Promise.resolve();
      if (state.kind === 'closed') return Promise.reject(state.error);
      return readyPromise;
    },
    send,
    call: (route, args, options) => callBySending(send, route, args, options),
    ping() {},
    async close() {
      if (state.kind === 'closed') {
        agent.destroy();
        return;
      }
      state = { kind: 'draining', goneAway: false };
      if (flights.size > 0) await new Promise<void>((wake) => drainWaiters.push(wake));
      destroy();
    },
    destroy,
  };
  /**
   * Whether the provider can be reached, found before the first call (and after a reconnect): one
   * connection opened (its handshake verified, for HTTPS) and closed. Until then the connection is
   * `connecting`; a failure closes it, so the pool backs off as for TCP.
   */
  const probe = (): void => {
    if (noTls) {
      setImmediate(() => unreachable(noTlsError()));
      return;
    }
    const socket = secure ? tls.connect({ host, port, ...tlsOptions }) : net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      unreachable(
        new RpcError('Network', `connect to ${address} timed out after ${init.connectTimeoutMs} ms`, {
          neverSent: true,
        }),
      );
    }, init.connectTimeoutMs);
    timer.unref();
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.destroy();
      lastActivity = Date.now();
      opened();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      unreachable(
        new RpcError('Network', `cannot connect to ${address}: ${messageOf(error)}`, {
          cause: error,
          neverSent: true,
        }),
      );
    });
  };
  probe();
  return connection;
}

/** The error of a call its caller aborted; the abort reason is its cause. */
function cancelled(call: WireCall, neverSent: boolean): RpcError {
  return new RpcError('Cancelled', `${call.route.label} was cancelled by the caller`, {
    neverSent,
    cause: call.signal?.reason,
  });
}

/**
 * The provider's HTTP/JSON entry (`server.http`): `POST /<service>/<method>` with a JSON array of
 * arguments, served by the same service table, through the same provider filter chain and under the same
 * limits as calls over the wire (provider/dispatch.ts): shutdown refusal, deadline, admission (its
 * elements counted before decoding, an execution slot from the provider's limits, the HTTP connection
 * holding a connection's share), decode, observe, the app's, the service's and the method's filters,
 * validation. Only declared methods are callable (the table's lookups are Maps).
 *
 * What a request costs is bounded by its bytes: headers by node:http (size and `headersTimeoutMs`), the
 * body by `maxBodyBytes` and `bodyTimeoutMs`, its decoding by the serialization limits (elements and
 * depth counted before `JSON.parse`, `__proto__` keys refused). Every refusal is a JSON error with a
 * fitting status (docs/http.md); the connection is closed after one when the body was not read.
 *
 * With the app's `server.tls` the entry serves HTTPS with those certificates (client certificates too,
 * when `server.tls` asks for them: a call's mTLS identity comes from its own connection's handshake);
 * plaintext next to TLS only with `server.http.plaintext`.
 *
 * `GET /openapi.json` answers the OpenAPI 3.1 document of what it serves (openapi/openapi-route.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorExposure } from '../../core/error-payload.js';
import type { Attachments } from '../../core/invocation.js';
import { errorCodeName, messageOf, RpcError } from '../../core/rpc-error.js';
import { PROTOBUF_CONTENT, sendEncoded, sendError, sendRefusal, sendResult } from '../../http/http-answer.js';
import { createBodyReader } from '../../http/http-body.js';
import {
  createHttpListener,
  type HttpConnection,
  type HttpListener,
  remoteOf,
} from '../../http/http-listener.js';
import type { HttpOptions } from '../../http/http-options.js';
import { HttpRefusal, readCallTarget } from '../../http/http-request.js';
import { CALL_ID_ATTACHMENT, validCallId } from '../../observability/call-id.js';
import type { Logger } from '../../observability/logger.js';
import type { InflateLimits } from '../../protocol/compression.js';
import type { DecodeLimits } from '../../serialization/decode-limits.js';
import { createProtobufSerializer } from '../../serialization/protobuf.js';
import type { Serializer } from '../../serialization/serializer.js';
import type { ServiceDefinition } from '../../service/define-service.js';
import { createArgumentsReader } from '../arguments-reader.js';
import { createProviderEntry, type ScrubbedError, type ShapedError } from '../entry.js';
import { forwardedClient } from '../forwarded-client.js';
import type { PeerSlot } from '../peer-limits.js';
import type { ServerInvocation } from '../server-invocation.js';
import { type ExportedMethod, methodNotFound, methodOf, type ServiceTable } from '../service-table.js';
import type { Serving } from '../serving.js';
import { createHttpStreamPort, type HttpStreamPort, wantsEventStream } from './http-stream.js';
import { createOpenApiRoute } from './openapi/openapi-route.js';
import { createServiceLookup } from './service-lookup.js';

/** The entry: listen, go away (answers close their connections), close gracefully, destroy. */
export type HttpEntry = HttpListener;

export interface HttpEntryParts {
  readonly table: ServiceTable;
  /** The provider's limits and shutdown state, shared with its wire and in-process calls. */
  readonly serving: Serving;
  /** The json serializer: the body format. */
  readonly json: Serializer;
  readonly options: HttpOptions;
  readonly decodeLimits: DecodeLimits;
  readonly exposeStack: boolean;
  readonly exposeErrors: ErrorExposure;
  /** A request refused for what it carries (logged, rate-limited, by the provider). */
  onRefused(remote: string, reason: string): void;
  /** A handler's system error the caller was not shown. */
  onScrubbed(scrubbed: ScrubbedError): void;
  /** The plaintext warning, certificate reloads and handshake failures (rate-limited). */
  readonly logger?: Logger | undefined;
  /** Told once a reload loaded new certificates (tests wait for it). */
  readonly onReload?: (() => void) | undefined;
  /** The names of `server.auth`'s authenticators, for the OpenAPI document's security schemes. Default none. */
  readonly authenticators?: readonly string[] | undefined;
}

/** HTTP bodies are never compressed by Callisto's framing: a compressed flag is never set. */
const NO_INFLATE: InflateLimits = { enabled: false, maxBytes: 0, maxRatio: 1 };

export function createHttpEntry(parts: HttpEntryParts): HttpEntry {
  const { table, serving, json, options } = parts;
  const lookup = createServiceLookup(table);
  const slots = new WeakMap<Socket, PeerSlot>();
  const listCallable = parts.exposeErrors === 'all';
  const bodies = createBodyReader(options, 'server.http');
  const protobufBodies = createProtobufSerializer();
  const openApi = createOpenApiRoute({ table, authenticators: parts.authenticators ?? [] });

  const listener = createHttpListener({
    options,
    where: 'server.http',
    admit(socket) {
      const slot = serving.limits.connect(socket.remoteAddress ?? '');
      if (typeof slot === 'string') {
        parts.onRefused(remoteOf(socket), `HTTP connection refused: ${slot}`);
        return false;
      }
      slots.set(socket, slot);
      socket.once('close', () => slot.disconnect());
      return true;
    },
    onRefused: parts.onRefused,
    logger: parts.logger,
    onReload: parts.onReload,
    handle(request, response, connection) {
      void serveRequest(request, response, connection);
    },
  });

  const refuse = (request: IncomingMessage, response: ServerResponse, refusal: HttpRefusal): void => {
    // what a request carries or how it is sent is logged (rate-limited); a wrong name or verb is not
    if (refusal.status !== 404 && refusal.status !== 405)
      parts.onRefused(remoteOf(request.socket), refusal.message);
    sendRefusal(response, json, refusal, !request.complete);
  };

  const serveRequest = async (
    request: IncomingMessage,
    response: ServerResponse,
    connection: HttpConnection,
  ): Promise<void> => {
    const slot = slots.get(connection.socket);
    if (slot === undefined) {
      response.destroy();
      return;
    }
    const receivedAt = Date.now();
    let target: ReturnType<typeof readCallTarget>;
    let body: Buffer;
    let exported: ReturnType<typeof lookup.find>;
    let bodyFormat: Serializer = json;
    try {
      if (openApi.matches(request)) {
        openApi.serve(request, response);
        return;
      }
      target = readCallTarget(request);
      exported = lookup.find(target);
      if (methodOf(exported, target.method) === undefined) {
        const error = methodNotFound(exported, target.method, listCallable);
        throw new HttpRefusal(404, 'MethodNotFound', error.message);
      }
      refuseStreamKind(methodOf(exported, target.method)!, target.format);
      if (target.format === 'protobuf') bodyFormat = protobufBody(exported.definition, target.method);
      body = await bodies.read(request);
    } catch (error) {
      if (error instanceof HttpRefusal) refuse(request, response, error);
      else response.destroy();
      return;
    }
    const method = methodOf(exported, target.method)!;
    const remote = remoteOf(request.socket);
    // only a trusted gateway's RPC connection may name another client: over HTTP it is never honoured
    // nor shown to the handler (x-callisto-attachment-callisto-forwarded-client)
    forwardedClient(target.attachments, false);
    const reader = createArgumentsReader({ decode: parts.decodeLimits, inflate: NO_INFLATE }, (reason) =>
      parts.onRefused(remote, reason),
    );
    entry.call({
      method,
      attachments: target.attachments,
      // the caller's `callisto-call-id` header when well-formed, else (undefined) the invocation makes one
      callId: validCallId(request.headers[CALL_ID_ATTACHMENT]),
      deadline: target.timeoutMs > 0 ? receivedAt + target.timeoutMs : 0,
      oneway: false,
      remoteAddress: remote,
      serializer: bodyFormat,
      admission: slot,
      onSignal: (called) => {
        // the client went away before the answer: the handler's signal says so
        response.once('close', () => {
          if (!called.answered) {
            called.answered = true;
            const gone = new RpcError('Cancelled', `the HTTP caller (${remote}) went away`);
            called.abort(gone);
            called.stream?.stop(gone);
          }
        });
      },
      reader,
      body,
      // an identity from this connection's own TLS handshake (HTTPS), never from its address
      peerCertificate: connection.peerCertificate,
      origin: response,
      stream:
        method.declaration.stream === 'server'
          ? createHttpStreamPort({ response, json, eventStream: wantsEventStream(request) })
          : undefined,
    });
  };

  /** A server stream's caller going away cancels it: the handler's iteration ends (its `finally` runs). */
  const cancelOnClose = (invocation: ServerInvocation, response: ServerResponse): void => {
    response.once('close', () => {
      if (invocation.answered) return;
      invocation.answered = true;
      const error = new RpcError('Cancelled', `the HTTP caller (${invocation.remoteAddress}) went away`);
      invocation.abort(error);
      invocation.stream?.stop(error);
    });
  };

  /**
   * An HTTP caller has no consumer of its own to give up at its deadline: the entry answers 504 for it
   * then, and aborts the handler's signal; the handler's late result is dropped.
   */
  const answerAtDeadline = (invocation: ServerInvocation, response: ServerResponse): void => {
    const timer = setTimeout(
      () => {
        if (invocation.answered) return;
        const error = new RpcError('Timeout', `${invocation.label}: the caller's deadline passed`);
        const stream = invocation.stream?.port as HttpStreamPort | undefined;
        if (stream?.started === true) {
          // a stream under way ends with its error event (or line), written when the handler stops
          invocation.abort(error);
          stream.stop(error);
          return;
        }
        invocation.answered = true;
        invocation.abort(error);
        invocation.stream?.stop(error);
        sendError(response, {
          json,
          code: 'Timeout',
          payload: { name: 'RpcError', message: error.message, details: {} },
        });
      },
      Math.max(0, invocation.deadline - Date.now()),
    );
    response.once('close', () => clearTimeout(timer));
  };

  const sendShaped = (response: ServerResponse, error: ShapedError, attachments?: Attachments): void =>
    sendError(response, {
      json,
      code: errorCodeName(error.status),
      payload: error.payload,
      attachments,
    });

  /** HTTP's side of the provider entry (entry.ts): answers as JSON (or protobuf) responses. */
  const entry = createProviderEntry(
    {
      exposeStack: parts.exposeStack,
      exposeErrors: parts.exposeErrors,
      onScrubbed: parts.onScrubbed,
    },
    {
      // an HTTP caller has a deadline of its own: the entry answers 504 for it then
      // the answer names the call's id (the caller's, or the one made here) for the caller's own logs
      began: (invocation) => {
        const response = invocation.origin as ServerResponse;
        response.setHeader(CALL_ID_ATTACHMENT, invocation.callId);
        if (invocation.stream !== undefined) cancelOnClose(invocation, response);
        if (invocation.deadline > 0) answerAtDeadline(invocation, response);
      },
      ended: () => serving.ended(),
      answer(invocation, value) {
        const response = invocation.origin as ServerResponse;
        const attachments = invocation.answerAttachments;
        const stream = invocation.stream?.port as HttpStreamPort | undefined;
        if (stream !== undefined) {
          stream.end();
          return;
        }
        try {
          const format = invocation.serializer!;
          if (format === json) sendResult(response, json, value, attachments);
          else sendEncoded(response, PROTOBUF_CONTENT, format.encode(value), attachments);
        } catch (encodeError) {
          const error = new RpcError(
            'Internal',
            `cannot encode the result of ${invocation.label}: ${messageOf(encodeError)}`,
          );
          const shaped = entry.shape(error, {
            declared: invocation.declared,
            label: invocation.label,
            remote: invocation.remoteAddress,
            callId: invocation.callId,
          });
          sendShaped(response, shaped, attachments);
        }
      },
      fail(invocation, error) {
        const stream = invocation.stream?.port as HttpStreamPort | undefined;
        if (stream?.started === true) {
          stream.fail(errorCodeName(error.status), error.payload);
          return;
        }
        sendShaped(invocation.origin as ServerResponse, error, invocation.answerAttachments);
      },
    },
  );

  /**
   * Over HTTP/1.1 only a server stream is served (a request body cannot be read while the answer
   * streams): a client or two-way stream is refused, pointing to Callisto's protocol; a server stream
   * takes JSON arguments (its messages are JSON).
   */
  const refuseStreamKind = (method: ExportedMethod, format: string): void => {
    const kind = method.declaration.stream;
    if (kind === undefined) return;
    if (kind !== 'server') {
      throw new HttpRefusal(
        400,
        'BadRequest',
        `${method.label} is a ${kind} stream: the HTTP entry serves server streams only; call it over Callisto's protocol (TCP or TLS)`,
      );
    }
    if (format === 'protobuf') {
      throw new HttpRefusal(415, 'BadRequest', `${method.label} is a server stream: send application/json`);
    }
  };

  /** The method's protobuf messages as the body format; 415 when the service declares none. */
  const protobufBody = (definition: ServiceDefinition<unknown>, method: string): Serializer => {
    try {
      return protobufBodies.forMethod!(definition, method, 'provider');
    } catch (error) {
      throw new HttpRefusal(415, 'BadRequest', `${messageOf(error)}: send application/json`);
    }
  };

  return listener;
}

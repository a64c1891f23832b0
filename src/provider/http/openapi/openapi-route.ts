/**
 * `GET /openapi.json` on the HTTP entry: the document of what the entry serves (openapi-document.ts),
 * built again only when the service table changes, and refused (500) rather than sent when it would be
 * larger than `MAX_DOCUMENT_BYTES`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSON_CONTENT, sendAnswer } from '../../../http/answer.js';
import { HttpRefusal } from '../../../http/http-request.js';
import type { ServiceTable } from '../../service-table.js';
import { openApiDocument } from './openapi-document.js';

export const OPENAPI_PATH = '/openapi.json';

/** Largest document the entry sends. */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

export interface OpenApiRoute {
  /** Whether `request` asks for the document (GET or HEAD of /openapi.json). */
  matches(request: IncomingMessage): boolean;
  /** Answers it; throws an HttpRefusal when it cannot. */
  serve(request: IncomingMessage, response: ServerResponse): void;
}

export interface OpenApiRouteInit {
  readonly table: ServiceTable;
  /** The names of `server.auth`'s authenticators; none: no authentication. */
  readonly authenticators: readonly string[];
  /** Largest document sent. Default MAX_DOCUMENT_BYTES. */
  readonly maxBytes?: number;
}

export function createOpenApiRoute(init: OpenApiRouteInit): OpenApiRoute {
  const { table } = init;
  const maxBytes = init.maxBytes ?? MAX_DOCUMENT_BYTES;
  let cached: { version: number; body: Buffer } | undefined;
  const body = (): Buffer => {
    if (cached?.version !== table.version) {
      const services = table.list().filter((exported) => exported.servedOn.http);
      const document = openApiDocument({ services, authenticators: init.authenticators });
      cached = { version: table.version, body: Buffer.from(JSON.stringify(document)) };
    }
    return cached.body;
  };
  return {
    matches(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const url = request.url ?? '/';
      const query = url.indexOf('?');
      return (query < 0 ? url : url.slice(0, query)) === OPENAPI_PATH;
    },
    serve(request, response) {
      if (
        request.headers['content-length'] !== undefined ||
        request.headers['transfer-encoding'] !== undefined
      ) {
        throw new HttpRefusal(400, 'BadRequest', `GET ${OPENAPI_PATH} takes no body`);
      }
      const document = body();
      if (document.length > maxBytes) {
        throw new HttpRefusal(
          500,
          'Internal',
          `the OpenAPI document (${document.length} bytes) is larger than ${maxBytes} bytes: too many services or schemas to describe`,
        );
      }
      sendAnswer(response, { status: 200, contentType: JSON_CONTENT, body: document, request });
    },
  };
}

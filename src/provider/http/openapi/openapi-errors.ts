/**
 * The error answers of the HTTP entry in the OpenAPI document: Callisto's error body
 * (`{"error":{"code","name","message","details"}}`, docs/http.md) and the statuses the entry answers
 * with (http/http-status.ts, and the entry's own refusals: 405 is for other verbs, not in an operation).
 */
import { ErrorCode } from '../../../core/rpc-error.js';

export const ERROR_SCHEMA = 'CallistoError';

/** The error body. */
export function errorBodySchema(): Record<string, unknown> {
  return {
    type: 'object',
    description: "Callisto's error answer (docs/http.md, docs/errors.md)",
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'name', 'message', 'details'],
        properties: {
          code: { type: 'string', enum: Object.keys(ErrorCode), description: 'the RpcError code' },
          name: { type: 'string', description: "the error's name (a declared business error keeps its own)" },
          message: { type: 'string' },
          details: { type: 'object', description: "a declared business error's own fields" },
        },
      },
    },
  };
}

/** Each status an operation may answer with as an error, and when (docs/http.md's table). */
const ERROR_STATUSES: ReadonlyArray<readonly [status: string, when: string, auth?: boolean]> = [
  [
    '400',
    'BadRequest (arguments not an array, failed validation, a bad header) or Serialization (a body that is not JSON, too many elements, too deep)',
  ],
  ['401', 'Unauthorized: refused by authentication', true],
  ['404', 'ServiceNotFound or MethodNotFound'],
  ['408', 'Timeout: the headers or the body did not arrive in time'],
  ['413', 'BadRequest: a body over server.http.maxBodyBytes'],
  [
    '415',
    'BadRequest: a content type other than JSON (or protobuf, for a service that declares its messages)',
  ],
  ['429', 'RateLimited: refused by a rate limit'],
  ['500', 'ProviderError (the method threw) or Internal'],
  ['503', 'Overloaded or Shutdown'],
  ['504', "Timeout: the caller's deadline (x-callisto-timeout-ms) passed"],
];

/** `components.responses`: one per status, named `Error<status>`. */
export function errorResponses(auth: boolean): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, when, needsAuth] of ERROR_STATUSES) {
    if (needsAuth === true && !auth) continue;
    responses[`Error${status}`] = {
      description: when,
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
    };
  }
  return responses;
}

/** An operation's `responses` entries for the errors. */
export function errorResponseRefs(auth: boolean): Record<string, unknown> {
  const refs: Record<string, unknown> = {};
  for (const [status, , needsAuth] of ERROR_STATUSES) {
    if (needsAuth === true && !auth) continue;
    refs[status] = { $ref: `#/components/responses/Error${status}` };
  }
  return refs;
}

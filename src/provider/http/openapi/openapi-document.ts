/**
 * The OpenAPI 3.1 document of the services an HTTP entry serves (`GET /openapi.json`, docs/http.md):
 * one `POST /<service>/<method>` operation per method, with
 *
 * - the request body the entry accepts: a JSON array of the arguments, its schema the method's `args`
 *   (any array without one); `application/x-protobuf` too for a service that declares its messages;
 * - the answers: the result (`returns`; any without one), 204 for nothing, a server stream as
 *   `text/event-stream` and `application/x-ndjson` (each message's schema under `x-callisto-message`);
 *   every error status of docs/http.md with Callisto's error body;
 * - the headers a caller may send (timeout, version, group, call id), and the security schemes of
 *   `server.auth` (bearer tokens, JWTs, mutual TLS).
 *
 * Client and two-way streams are left out (the entry serves server streams only). A service provided in
 * several versions or groups is one path: the one without a group (else the first), its versions in the
 * `x-callisto-version` header's enum, the schemas those of the first version.
 */
import { GROUP_HEADER, TIMEOUT_HEADER, VERSION_HEADER } from '../../../http/http-request.js';
import { CALL_ID_ATTACHMENT } from '../../../observability/call-id.js';
import type { ExportedMethod, ExportedService } from '../../service-table.js';
import { ERROR_SCHEMA, errorBodySchema, errorResponseRefs, errorResponses } from './openapi-errors.js';
import { addSchemaComponent, componentName, type SchemaComponent } from './openapi-schemas.js';

export interface OpenApiInit {
  /** The services the entry serves. */
  readonly services: readonly ExportedService[];
  /** The names of `server.auth`'s authenticators (`token`, `jwt`, `mtls`); none: no authentication. */
  readonly authenticators: readonly string[];
}

type Json = Record<string, unknown>;

const TAGGED = "in the json serializer's tagged format (docs/values.md): plain JSON is itself";

export function openApiDocument(init: OpenApiInit): Json {
  const schemas: Json = { [ERROR_SCHEMA]: errorBodySchema() };
  const auth = init.authenticators.length > 0;
  const paths: Json = {};
  const tags: Json[] = [];
  for (const { exported, versions, groupRequired } of representatives(init.services)) {
    const { definition } = exported;
    tags.push({
      name: definition.name,
      description: `Callisto service ${definition.name}, version${versions.length > 1 ? 's' : ''} ${versions.join(', ')}${definition.group === '' ? '' : `, group ${definition.group}`}`,
    });
    const parameters: Json[] = [
      { $ref: '#/components/parameters/Timeout' },
      { $ref: '#/components/parameters/CallId' },
      {
        name: VERSION_HEADER,
        in: 'header',
        required: versions.length > 1,
        description: 'the service version (required when several are provided)',
        schema: { type: 'string', enum: versions },
      },
    ];
    if (groupRequired) {
      parameters.push({
        name: GROUP_HEADER,
        in: 'header',
        required: true,
        description: 'the service group',
        schema: { type: 'string', enum: [definition.group] },
      });
    }
    for (const method of exported.methods.values()) {
      const kind = method.declaration.stream;
      if (kind === 'client' || kind === 'bidi') continue;
      paths[`/${definition.name}/${method.name}`] = {
        post: operation(method, { schemas, parameters, auth, protobuf: definition.protobuf !== undefined }),
      };
    }
  }
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Callisto services',
      version: [...new Set(init.services.map((e) => e.definition.version))].join(', ') || '0',
      description: `The services this provider serves over HTTP/JSON (docs/http.md): POST /<service>/<method> with the arguments as a JSON array, ${TAGGED}.`,
    },
    tags,
    paths,
    components: {
      schemas,
      responses: errorResponses(auth),
      parameters: {
        Timeout: {
          name: TIMEOUT_HEADER,
          in: 'header',
          required: false,
          description: "the caller's deadline, ms from when the headers arrived; then 504",
          schema: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
        },
        CallId: {
          name: CALL_ID_ATTACHMENT,
          in: 'header',
          required: false,
          description: "the call's id in the provider's logs",
          schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
        },
      },
      ...(auth ? { securitySchemes: securitySchemes(init.authenticators) } : {}),
    },
  };
  if (auth) document['security'] = securityRequirements(init.authenticators);
  return document;
}

interface OperationParts {
  readonly schemas: Json;
  readonly parameters: readonly Json[];
  readonly auth: boolean;
  readonly protobuf: boolean;
}

function operation(method: ExportedMethod, parts: OperationParts): Json {
  const { declaration, service } = method;
  const base = componentName(`${service.name}.${method.name}`);
  const args = addSchemaComponent(parts.schemas, `${base}.args`, declaration.args, 'input');
  const result = addSchemaComponent(parts.schemas, `${base}.result`, declaration.returns, 'output');
  const stream = declaration.stream === 'server';
  const protobuf = parts.protobuf && !stream;
  const codec = protobuf ? service.protobuf?.method(method.name) : undefined;
  const argsSchema = schemaOf(args, {
    type: 'array',
    description: `the arguments, in order, ${TAGGED}`,
  });
  const minItems = args.kind === 'component' ? minItemsOf(parts.schemas, `${base}.args`) : 0;
  const binary = (message: string | undefined, what: string): Json => ({
    schema: {
      description: `the ${what} message${message === undefined ? '' : ` ${message}`} (callisto proto export ${service.name})`,
    },
  });
  const responses: Json = {};
  if (stream) {
    const message = schemaOf(result, {});
    responses['200'] = {
      description: `a server stream: one message per event (Accept: text/event-stream) or line (otherwise), each ${TAGGED}; it ends with an end event (line {"$t":"end"}) or an error event (line {"$t":"error","v":{...}})`,
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: 'data: <message>; event: end; event: error' },
          'x-callisto-message': message,
        },
        'application/x-ndjson': {
          schema: { type: 'string', description: 'one message per line' },
          'x-callisto-message': message,
        },
      },
    };
  } else if (result.kind === 'component' && result.void) {
    responses['204'] = { description: 'done: the method returns nothing' };
  } else {
    responses['200'] = {
      description: `the result, ${TAGGED}${result.kind === 'none' && result.note !== undefined ? ` (any value: ${result.note})` : ''}`,
      content: {
        'application/json': { schema: schemaOf(result, {}) },
        ...(protobuf ? { 'application/x-protobuf': binary(codec?.responseType, 'response') } : {}),
      },
    };
    if (result.kind === 'none') responses['204'] = { description: 'done: the method returned nothing' };
  }
  Object.assign(responses, errorResponseRefs(parts.auth));
  return {
    operationId: base,
    tags: [service.name],
    summary: `${service.name}.${method.name}${stream ? ' (server stream)' : ''}`,
    ...(args.kind === 'none' && args.note !== undefined
      ? { description: `Arguments not described: ${args.note}` }
      : {}),
    parameters: parts.parameters,
    requestBody: {
      required: minItems > 0,
      description: 'the arguments as a JSON array; an empty body is []',
      content: {
        'application/json': { schema: argsSchema },
        ...(protobuf ? { 'application/x-protobuf': binary(codec?.requestType, 'request') } : {}),
      },
    },
    responses,
  };
}

function schemaOf(component: SchemaComponent, fallback: Json): Json {
  if (component.kind === 'component') return { $ref: component.ref };
  return component.note === undefined
    ? fallback
    : { ...fallback, description: `any value: ${component.note}` };
}

function minItemsOf(schemas: Json, name: string): number {
  const schema = schemas[componentName(name)] as Json | undefined;
  return typeof schema?.['minItems'] === 'number' ? schema['minItems'] : 0;
}

/** One service per name: the one without a group (else the first), with the versions of its group. */
function representatives(
  services: readonly ExportedService[],
): Array<{ exported: ExportedService; versions: string[]; groupRequired: boolean }> {
  const byName = new Map<string, ExportedService[]>();
  for (const exported of services) {
    const list = byName.get(exported.definition.name) ?? [];
    list.push(exported);
    byName.set(exported.definition.name, list);
  }
  return [...byName.values()].map((list) => {
    const exported = list.find((e) => e.definition.group === '') ?? list[0]!;
    const group = exported.definition.group;
    const versions = list.filter((e) => e.definition.group === group).map((e) => e.definition.version);
    return { exported, versions, groupRequired: group !== '' };
  });
}

function securitySchemes(authenticators: readonly string[]): Json {
  const schemes: Json = {};
  for (const name of authenticators) {
    if (name === 'token') {
      schemes['token'] = {
        type: 'http',
        scheme: 'bearer',
        description: 'a shared-secret token (server.auth.tokens)',
      };
    } else if (name === 'jwt') {
      schemes['jwt'] = {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'a signed token (server.auth.jwt*)',
      };
    } else if (name === 'mtls') {
      schemes['mtls'] = { type: 'mutualTLS', description: 'a client certificate (server.auth.mtls)' };
    } else {
      schemes[componentName(name)] = {
        type: 'http',
        scheme: 'bearer',
        description: `credentials of the ${name} authenticator`,
      };
    }
  }
  return schemes;
}

/** Any one of the authenticators will do: one requirement each. */
function securityRequirements(authenticators: readonly string[]): Json[] {
  return authenticators.map((name) => ({ [componentName(name)]: [] }));
}

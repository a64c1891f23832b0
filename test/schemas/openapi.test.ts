/**
 * `GET /openapi.json` on the provider's HTTP entry: the document is valid OpenAPI 3.1 for a standard
 * validator (@seriousme/openapi-schema-validator), and EVERY operation in it is called from the document
 * alone (path, verb, required headers, a request body sampled from its schema) against a real provider
 * over HTTP, each answer checked against the response schema the document gives for its status
 * (Ajv, JSON Schema 2020-12). Also: security schemes and 401 with server.auth, the document following
 * the service table, and what is not served.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type CallistoApp, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { OrdersDef, ordersImpl } from './fixtures/shop.js';
import { sampleOf } from './support/schema-sample.js';

type Json = Record<string, unknown>;

const root = protobuf.loadSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '../http/fixtures/users.proto'),
);
const ProtoUsersDef = defineService<{
  getUser(id: number): unknown;
  rename(id: number, name: string): void;
  echoTree(tree: unknown): unknown;
  label(labels: Record<string, string>): void;
}>('example.ProtoUsers', {
  methods: { getUser: { idempotent: true }, rename: {}, echoTree: {}, label: {} },
  protobuf: root,
});
const protoUsersImpl = {
  getUser: (id: number) => ({ id: id ?? 0, name: 'ann', tags: [], labels: {}, balance: '1' }),
  rename: () => undefined,
  echoTree: (tree: unknown) => tree ?? { label: 'leaf', children: [] },
  label: () => undefined,
};
const OrdersV2 = defineService<typeof ordersImpl>('shop.v1.Orders', {
  version: '2.0.0',
  methods: OrdersDef.methods as never,
});
const TOKEN = 'openapi-test-token-0123456789';

afterEach(closeAll);

async function provider(options: Parameters<typeof testApp>[0] = {}): Promise<CallistoApp> {
  const app = await testApp({ ...options, server: { ...options.server, http: { port: 0 } } });
  app.provide(OrdersDef, ordersImpl);
  app.provide(OrdersV2, ordersImpl);
  app.provide(ProtoUsersDef, protoUsersImpl);
  await app.start();
  return app;
}

async function documentOf(app: CallistoApp): Promise<Json> {
  const answer = await fetch(`http://127.0.0.1:${app.httpPort}/openapi.json`);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  return (await answer.json()) as Json;
}

async function expectValid(document: Json): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
}

/** JSON pointer escaping of one path segment. */
const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

interface Called {
  readonly path: string;
  readonly status: number;
}

/** Calls every operation of `document` as it describes it; checks each answer against its schema. */
async function callEveryOperation(
  document: Json,
  base: string,
  headers: Record<string, string> = {},
): Promise<Called[]> {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
  const called: Called[] = [];
  for (const [route, item] of Object.entries(document['paths'] as Record<string, Json>)) {
    expect(Object.keys(item)).toEqual(['post']);
    const operation = item['post'] as Json;
    const request: Record<string, string> = { 'content-type': 'application/json', ...headers };
    for (const parameter of operation['parameters'] as Json[]) {
      const resolved = (
        typeof parameter['$ref'] === 'string'
          ? (document['components'] as Json)['parameters']![
              (parameter['$ref'] as string).split('/').at(-1) as never
            ]
          : parameter
      ) as Json;
      if (resolved['required'] === true) {
        expect(resolved['in']).toBe('header');
        request[resolved['name'] as string] = String(sampleOf(document, resolved['schema']));
      }
    }
    const body = (operation['requestBody'] as Json)['content'] as Record<string, Json>;
    const args = sampleOf(document, body['application/json']!['schema']);
    expect(Array.isArray(args), `${route}: the arguments are an array`).toBe(true);
    const answer = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: request,
      body: JSON.stringify(args),
    });
    const responses = operation['responses'] as Record<string, Json>;
    const status = String(answer.status);
    const text = await answer.text();
    expect(Object.keys(responses), `${route} answered ${status} ${text}`).toContain(status);
    expect(answer.status, `${route} answered ${status} ${text}`).toBeLessThan(300);
    const described = responses[status]!;
    const at = `openapi.json#/paths/${pointer(route)}/post/responses/${status}/content`;
    if (status === '204') {
      expect(described['content']).toBeUndefined();
      expect(text).toBe('');
    } else {
      const type = answer.headers.get('content-type')!.split(';')[0]!;
      const content = described['content'] as Record<string, Json>;
      expect(Object.keys(content), route).toContain(type);
      if (type === 'application/x-ndjson') {
        const lines = text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown);
        expect(lines.at(-1)).toEqual({ $t: 'end' });
        const check = ajv.compile({ $ref: `${at}/${pointer(type)}/x-callisto-message` });
        for (const message of lines.slice(0, -1))
          expect(check(message), `${route}: ${ajv.errorsText(check.errors)}`).toBe(true);
        expect(lines.length).toBeGreaterThan(1);
      } else {
        const check = ajv.compile({ $ref: `${at}/${pointer(type)}/schema` });
        expect(check(JSON.parse(text)), `${route}: ${text}: ${ajv.errorsText(check.errors)}`).toBe(true);
      }
    }
    called.push({ path: route, status: answer.status });
  }
  return called;
}

describe('GET /openapi.json', () => {
  it('is valid OpenAPI 3.1, and every operation in it answers as it says', async () => {
    const app = await provider();
    const document = await documentOf(app);
    await expectValid(document);
    const called = await callEveryOperation(document, `http://127.0.0.1:${app.httpPort}`);
    expect(called.map((each) => each.path).sort()).toEqual(
      [
        '/example.ProtoUsers/echoTree',
        '/example.ProtoUsers/getUser',
        '/example.ProtoUsers/label',
        '/example.ProtoUsers/rename',
        '/shop.v1.Orders/cancel',
        '/shop.v1.Orders/count',
        '/shop.v1.Orders/create',
        '/shop.v1.Orders/find',
        '/shop.v1.Orders/legacy',
        '/shop.v1.Orders/watch',
      ].sort(),
    );
    // what the schemas say reached the document: an argument tuple, a void method, a server stream
    const paths = document['paths'] as Record<string, { post: Json }>;
    const cancel = paths['/shop.v1.Orders/cancel']!.post;
    expect(Object.keys(cancel['responses'] as Json)).toContain('204');
    expect(Object.keys(cancel['responses'] as Json)).not.toContain('200');
    const watch = paths['/shop.v1.Orders/watch']!.post;
    expect(Object.keys(((watch['responses'] as Json)['200'] as Json)['content'] as Json)).toEqual([
      'text/event-stream',
      'application/x-ndjson',
    ]);
    const schemas = (document['components'] as { schemas: Record<string, Json> }).schemas;
    expect(schemas['shop.v1.Orders.create.args']).toMatchObject({ type: 'array', minItems: 2 });
    expect(schemas['shop.v1.Orders.create.result.Address']).toMatchObject({ required: ['city'] });
    // a service in two versions: the version header is required, with both
    const version = (paths['/shop.v1.Orders/count']!.post['parameters'] as Json[]).find(
      (p) => p['name'] === 'x-callisto-version',
    );
    expect(version).toMatchObject({ required: true, schema: { enum: ['1.0.0', '2.0.0'] } });
    // a protobuf service takes its messages too
    const getUser = paths['/example.ProtoUsers/getUser']!.post;
    expect(Object.keys((getUser['requestBody'] as Json)['content'] as Json)).toContain(
      'application/x-protobuf',
    );
    // every error status of the entry, with Callisto's error body
    for (const status of ['400', '404', '408', '413', '415', '429', '500', '503', '504']) {
      expect((getUser['responses'] as Json)[status]).toEqual({
        $ref: `#/components/responses/Error${status}`,
      });
    }
    expect((getUser['responses'] as Json)['401']).toBeUndefined();
    expect(document['security']).toBeUndefined();
  });

  it('a server stream as Server-Sent Events, as documented', async () => {
    const app = await provider();
    const answer = await fetch(`http://127.0.0.1:${app.httpPort}/shop.v1.Orders/watch`, {
      method: 'POST',
      headers: {
        accept: 'text/event-stream',
        'content-type': 'application/json',
        'x-callisto-version': '1.0.0',
      },
      body: '[5]',
    });
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await answer.text()).toMatch(/data: \{"id":5,"status":"OPEN"\}[\s\S]*event: end/);
  });

  it('an error answer matches the documented error body', async () => {
    const app = await provider();
    const document = await documentOf(app);
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema(document, 'openapi.json');
    const answer = await fetch(`http://127.0.0.1:${app.httpPort}/shop.v1.Orders/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-callisto-version': '1.0.0' },
      body: '["", {}]',
    });
    expect(answer.status).toBe(400);
    const check = ajv.compile({ $ref: 'openapi.json#/components/schemas/CallistoError' });
    expect(check(await answer.json())).toBe(true);
  });

  it('with server.auth: security schemes, 401 documented and answered without credentials', async () => {
    const app = await provider({ server: { auth: { tokens: { web: TOKEN }, defaultAccess: 'allow' } } });
    const document = await documentOf(app);
    await expectValid(document);
    expect((document['components'] as Json)['securitySchemes']).toEqual({
      token: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(document['security']).toEqual([{ token: [] }]);
    const base = `http://127.0.0.1:${app.httpPort}`;
    const refused = await fetch(`${base}/shop.v1.Orders/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-callisto-version': '1.0.0' },
      body: '[]',
    });
    expect(refused.status).toBe(401);
    const count = (document['paths'] as Record<string, { post: { responses: Json } }>)[
      '/shop.v1.Orders/count'
    ]!;
    expect(count.post.responses['401']).toEqual({ $ref: '#/components/responses/Error401' });
    const called = await callEveryOperation(document, base, { authorization: `Bearer ${TOKEN}` });
    expect(called).toHaveLength(10);
  });

  it('follows the service table; HEAD answers its headers; other verbs and paths are not it', async () => {
    const app = await testApp({ server: { http: { port: 0 } } });
    app.provide(OrdersDef, ordersImpl);
    await app.start();
    const base = `http://127.0.0.1:${app.httpPort}`;
    const before = await documentOf(app);
    expect(Object.keys(before['paths'] as Json)).not.toContain('/example.ProtoUsers/getUser');
    app.provide(ProtoUsersDef, protoUsersImpl);
    const after = await documentOf(app);
    expect(Object.keys(after['paths'] as Json)).toContain('/example.ProtoUsers/getUser');
    const head = await fetch(`${base}/openapi.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(JSON.stringify(after).length);
    expect((await fetch(`${base}/openapi.json`, { method: 'POST', body: '[]' })).status).toBe(404);
    expect((await fetch(`${base}/openapi.yaml`)).status).toBe(405);
  });

  it('bounded: a schema over 256 KiB is left out with a note, a document over 8 MiB refused', async () => {
    // about 300 KB of JSON Schema per method
    const huge = z.enum(
      Array.from({ length: 20_000 }, (_, i) => `value_${i}_xxxxx`) as [string, ...string[]],
    );
    const one = defineService<{ put(v: string): void }>('big.One', {
      methods: { put: { args: z.tuple([huge]), returns: z.void() } },
    });
    const app = await testApp({ server: { http: { port: 0 } } });
    app.provide(one, { put: () => undefined });
    await app.start();
    const document = await documentOf(app);
    await expectValid(document);
    const put = (document['paths'] as Record<string, { post: Json }>)['/big.One/put']!.post;
    expect(JSON.stringify(put['requestBody'])).toMatch(
      /any value: its schema \(\d+ bytes\) is larger than 262144 bytes/,
    );
    expect(JSON.stringify(document).length).toBeLessThan(100_000);
    // 40 methods of 200 KB each: more than 8 MiB in all
    const large = z.enum(
      Array.from({ length: 13_000 }, (_, i) => `value_${i}_xxxxx`) as [string, ...string[]],
    );
    const names = Array.from({ length: 45 }, (_, i) => `m${i}`);
    const many = defineService<Record<string, () => void>>('big.Many', {
      methods: Object.fromEntries(names.map((name) => [name, { args: z.tuple([large]), returns: z.void() }])),
    });
    app.provide(many, Object.fromEntries(names.map((name) => [name, () => undefined])));
    const answer = await fetch(`http://127.0.0.1:${app.httpPort}/openapi.json`);
    expect(answer.status).toBe(500);
    expect(await answer.json()).toMatchObject({
      error: { code: 'Internal', message: expect.stringMatching(/is larger than 8388608 bytes/) },
    });
  }, 60_000);
});

/**
 * The protobuf serializer on Callisto's framed protocol (real TCP): a reference with
 * `serializer: 'protobuf'` sends the method's request message and decodes its response message; errors
 * come back in json; a service without messages cannot be called in protobuf; msgpack calls of the same
 * provider are unaffected.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, createProtobufSerializer, defineService, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

const root = protobuf.loadSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/users.proto'),
);

interface ProtoUser {
  id: number;
  name: string;
  tags: string[];
  labels: Record<string, string>;
  balance: string;
}
interface ProtoUsers {
  getUser(id: number): Promise<ProtoUser>;
  rename(id: number, name: string): Promise<void>;
  echoTree(tree: unknown): Promise<unknown>;
  label(labels: Record<string, string>): Promise<void>;
}

const ProtoUsersDef = defineService<ProtoUsers>('example.ProtoUsers', {
  methods: { getUser: { idempotent: true }, rename: {}, echoTree: {}, label: {} },
  protobuf: root,
});
const PlainDef = defineService<{ ping(): Promise<string> }>('example.Plain', { methods: { ping: {} } });

const withProtobuf: AppOptions = {
  extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
};

afterEach(closeAll);

async function setup() {
  const provider = await testApp(withProtobuf);
  const renamed: Array<[number, string]> = [];
  provider.provide(ProtoUsersDef, {
    getUser: async (id) => {
      if (id < 0) throw new RpcError('BadRequest', `no user ${id}`);
      return {
        id,
        name: `user-${id}`,
        tags: ['x'],
        labels: { a: 'b' },
        balance: 1234567890123456789n,
      } as never;
    },
    rename: async (id, name) => {
      renamed.push([id, name]);
    },
    echoTree: async (tree) => tree,
    label: async () => {},
  });
  provider.provide(PlainDef, { ping: async () => 'pong' });
  await provider.start();
  const consumer = await testApp(withProtobuf);
  const url = `127.0.0.1:${provider.port}`;
  return { provider, consumer, url, renamed };
}

describe('protobuf over the framed protocol', () => {
  it('calls with the request message and decodes the response message', async () => {
    const { consumer, url, renamed } = await setup();
    const users = consumer.refer(ProtoUsersDef, { url, serializer: 'protobuf', injvm: false });
    expect(await users.getUser(5)).toEqual({
      id: 5,
      name: 'user-5',
      tags: ['x'],
      labels: { a: 'b' },
      balance: '1234567890123456789',
    });
    expect(await users.rename(2, 'Bo')).toBeUndefined();
    expect(renamed).toEqual([[2, 'Bo']]);
  });

  it("the request body is the method's request message (serializer id 4)", () => {
    const view = createProtobufSerializer().forMethod!(ProtoUsersDef, 'getUser', 'consumer');
    // GetUserRequest { id = 150 }: field 1, varint 150
    expect(Buffer.from(view.encode([150])).toString('hex')).toBe('089601');
    expect(view.id).toBe(4);
    const provider = createProtobufSerializer().forMethod!(ProtoUsersDef, 'getUser', 'provider');
    expect(provider.decode(Buffer.from('089601', 'hex'))).toEqual([150]);
  });

  it('errors come back in json, with their code', async () => {
    const { consumer, url } = await setup();
    const users = consumer.refer(ProtoUsersDef, { url, serializer: 'protobuf', injvm: false });
    await expect(users.getUser(-1)).rejects.toMatchObject({ code: 'BadRequest', message: 'no user -1' });
    // the same provider keeps serving msgpack calls
    const plain = consumer.refer(ProtoUsersDef, { url, injvm: false });
    expect(await plain.getUser(3)).toMatchObject({ id: 3, name: 'user-3' });
  });

  it('a service without messages cannot be called in protobuf', async () => {
    const { consumer, url } = await setup();
    const plain = consumer.refer(PlainDef, { url, serializer: 'protobuf', injvm: false });
    await expect(plain.ping()).rejects.toThrow(/declares no protobuf messages/);
  });
});

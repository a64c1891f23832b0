/**
 * Protocol Buffers bodies on the HTTP entry, for a service whose definition declares its messages: a
 * client encodes the request message (protobufjs here, hand-written bytes from Python's standard library
 * below), the same provider filters run, the answer is the response message. Bad bytes and limits are
 * JSON errors; a definition that does not match its .proto fails where it is defined.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { defineFilter, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { post } from './support.js';

const root = protobuf.loadSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/users.proto'),
);
const GetUserRequest = root.lookupType('example.GetUserRequest');
const User = root.lookupType('example.User');
const EchoTreeRequest = root.lookupType('example.EchoTreeRequest');

interface ProtoUser {
  id: number;
  name: string;
  tags: string[];
  labels: Record<string, string>;
  balance: string;
}
interface Tree {
  label: string;
  children: Tree[];
}
interface ProtoUsers {
  getUser(id: number): Promise<ProtoUser>;
  rename(id: number, name: string): Promise<void>;
  echoTree(tree: Tree): Promise<Tree>;
  label(labels: Record<string, string>): Promise<void>;
}

const ProtoUsersDef = defineService<ProtoUsers>('example.ProtoUsers', {
  methods: { getUser: { idempotent: true }, rename: {}, echoTree: {}, label: {} },
  protobuf: root,
});

afterEach(closeAll);

const renamed: Array<[number, string]> = [];
const seen: string[] = [];

async function provider(): Promise<string> {
  const audit = defineFilter({
    name: 'audit',
    position: 'provider',
    start: (invocation) => {
      seen.push(`${invocation.method} ${JSON.stringify(invocation.args)}`);
    },
  });
  const app = await testApp({ server: { http: { port: 0 } }, filters: { provider: [audit] } });
  app.provide(ProtoUsersDef, {
    getUser: async (id) => ({
      id,
      name: `user-${id}`,
      tags: ['a', 'b'],
      labels: { team: 'core' },
      balance: '9007199254740993',
    }),
    rename: async (id, name) => {
      renamed.push([id, name]);
    },
    echoTree: async (tree) => tree,
    label: async () => {},
  });
  await app.start();
  return `http://127.0.0.1:${app.httpPort}/example.ProtoUsers`;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

async function postBytes(url: string, body: Uint8Array, type = 'application/x-protobuf') {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

describe('protobuf on the HTTP entry', () => {
  it('takes the request message (fields = parameters in order) and answers the response message', async () => {
    const base = await provider();
    const answer = await postBytes(`${base}/getUser`, GetUserRequest.encode({ id: 7 }).finish());
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('application/x-protobuf');
    const user = User.toObject(User.decode(answer.bytes), { longs: String });
    expect(user).toEqual({
      id: 7,
      name: 'user-7',
      tags: ['a', 'b'],
      labels: { team: 'core' },
      balance: '9007199254740993',
    });
    expect(seen).toContain('getUser [7]');
  });

  it('maps several parameters, and a method that returns nothing to an empty message', async () => {
    const base = await provider();
    const RenameRequest = root.lookupType('example.RenameRequest');
    const answer = await postBytes(`${base}/rename`, RenameRequest.encode({ id: 3, name: 'Ann' }).finish());
    expect(answer.status).toBe(200);
    expect(answer.bytes.length).toBe(0);
    expect(renamed).toContainEqual([3, 'Ann']);
  });

  it('the same service still answers JSON', async () => {
    const base = await provider();
    const answer = await post(`${base}/getUser`, '[8]');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 8, name: 'user-8' });
  });

  it('refuses bytes that are no request message, nesting past the limit, and protobuf for a service without messages', async () => {
    const base = await provider();
    const garbage = await postBytes(`${base}/getUser`, new Uint8Array([0x12, 0x05, 0x41]));
    expect(garbage.status).toBe(400);
    expect(JSON.parse(Buffer.from(garbage.bytes).toString())).toMatchObject({
      error: { code: 'Serialization' },
    });
    // 150 levels of Tree.children, written by hand (protobufjs refuses to encode past its limit too)
    let tree = Buffer.from(root.lookupType('example.Tree').encode({ label: 'leaf' }).finish());
    for (let i = 0; i < 150; i++) tree = Buffer.concat([Buffer.from([0x12]), varint(tree.length), tree]);
    const deepBody = Buffer.concat([Buffer.from([0x0a]), varint(tree.length), tree]);
    const deep = await postBytes(`${base}/echoTree`, deepBody);
    expect(deep.status).toBe(400);
    expect(Buffer.from(deep.bytes).toString()).toMatch(/nesting|deeper/);
    const shallow = await postBytes(
      `${base}/echoTree`,
      EchoTreeRequest.encode({ tree: { label: 'x', children: [] } }).finish(),
    );
    expect(shallow.status).toBe(200);
    // a map entry keyed __proto__ (protobufjs makes it an own key): refused like in JSON
    const key = Buffer.from('__proto__');
    const entry = Buffer.concat([Buffer.from([0x0a, key.length]), key, Buffer.from([0x12, 1, 0x78])]);
    const proto = await postBytes(`${base}/label`, Buffer.concat([Buffer.from([0x0a, entry.length]), entry]));
    expect(proto.status).toBe(400);
    expect(Buffer.from(proto.bytes).toString()).toContain('__proto__');
    const app = await testApp({ server: { http: { port: 0 } } });
    app.provide(defineService('example.Plain', { methods: { ping: {} } }), { ping: () => 'pong' });
    await app.start();
    const plain = await postBytes(`http://127.0.0.1:${app.httpPort}/example.Plain/ping`, new Uint8Array());
    expect(plain.status).toBe(415);
  });

  it('a message longer than maxDecodedElements bytes is refused before it is decoded', async () => {
    const app = await testApp({ maxDecodedElements: 1_000, server: { http: { port: 0 } } });
    app.provide(ProtoUsersDef, {
      getUser: async (id) => ({ id }) as never,
      rename: async () => {},
      echoTree: async (tree) => tree,
      label: async () => {},
    });
    await app.start();
    const LabelRequest = root.lookupType('example.LabelRequest');
    const labels: Record<string, string> = {};
    for (let i = 0; i < 200; i++) labels[`k${i}`] = 'v';
    const body = LabelRequest.encode({ labels }).finish(); // about 1.6 KB
    expect(body.length).toBeGreaterThan(1_000);
    const answer = await postBytes(`http://127.0.0.1:${app.httpPort}/example.ProtoUsers/label`, body);
    expect(answer.status).toBe(400);
    expect(Buffer.from(answer.bytes).toString()).toContain('maxDecodedElements');
  });

  it('a definition that does not match its .proto fails where it is defined', () => {
    expect(() =>
      defineService<{ getUser(id: number): Promise<unknown>; missing(): Promise<void> }>(
        'example.ProtoUsers',
        {
          methods: { getUser: {}, missing: {} },
          protobuf: root,
        },
      ),
    ).toThrow(/has no rpc missing/);
    expect(() => defineService('example.Nowhere', { protobuf: root })).toThrow(
      /declares no service example\.Nowhere/,
    );
  });

  it('is spoken by a Python client with hand-written protobuf bytes (standard library only)', async () => {
    const base = await provider();
    const script = `
import json, sys, urllib.request
def varint(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def read_varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]; i += 1
        result |= (b & 0x7f) << shift; shift += 7
        if not b & 0x80: return result, i
def fields(buf):
    i, out = 0, []
    while i < len(buf):
        key, i = read_varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(buf, i)
        elif wire == 2:
            length, i = read_varint(buf, i); value = buf[i:i + length]; i += length
        else:
            raise ValueError("wire type %d" % wire)
        out.append((number, value))
    return out
body = bytes([0x08]) + varint(42)  # GetUserRequest { id = 42 }
req = urllib.request.Request(sys.argv[1] + "/getUser", data=body,
    headers={"content-type": "application/x-protobuf"}, method="POST")
with urllib.request.urlopen(req) as res:
    user = {"tags": [], "labels": {}}
    for number, value in fields(res.read()):
        if number == 1: user["id"] = value
        elif number == 2: user["name"] = value.decode()
        elif number == 3: user["tags"].append(value.decode())
        elif number == 4:
            entry = dict(fields(value)); user["labels"][entry[1].decode()] = entry[2].decode()
        elif number == 5: user["balance"] = str(value)
print(json.dumps(user))
`;
    const { stdout } = await promisify(execFile)('python3', ['-c', script, base]);
    expect(JSON.parse(stdout)).toEqual({
      id: 42,
      name: 'user-42',
      tags: ['a', 'b'],
      labels: { team: 'core' },
      balance: '9007199254740993',
    });
  });
});

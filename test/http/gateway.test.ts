/**
 * The standalone gateway over real sockets and a real etcd: routes HTTP calls to the providers the
 * registry lists (load balanced across them, failing over when one goes away), refuses services nobody
 * provides and methods they do not declare, keeps what it holds bounded, and is called with curl and
 * from Python's standard library as a client of another stack would.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CallistoApp,
  createGateway,
  defineFilter,
  type Gateway,
  type GatewayOptions,
} from '../../src/index.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { post, UserServiceDef, userService } from './support.js';

const run = promisify(execFile);
const gateways: Gateway[] = [];

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
  await closeAll();
});

/** A unique group per test keeps the shared etcd's entries of other tests apart. */
let groupCounter = 0;

async function setup(
  providers = 2,
  gatewayOptions: Partial<GatewayOptions> = {},
): Promise<{ base: string; group: string; apps: CallistoApp[]; registry: string }> {
  const registry = `etcd://${sharedServerAddress('etcd')}`;
  const group = `gw-${process.pid}-${++groupCounter}`;
  const definition = { ...UserServiceDef, group } as typeof UserServiceDef;
  const apps: CallistoApp[] = [];
  for (let i = 0; i < providers; i++) {
    const app = await testApp({ application: `users-${i}`, registry: [registry] });
    app.provide(definition, {
      ...userService,
      whoami: async () => ({ provider: `users-${i}` }),
    });
    await app.start();
    apps.push(app);
  }
  const gateway = await createGateway({
    registry,
    port: 0,
    ...gatewayOptions,
    app: {
      logLevel: 'silent',
      load: { configFile: false, env: false },
      consumer: { loadbalance: 'roundrobin' },
      ...gatewayOptions.app,
    },
  });
  gateways.push(gateway);
  return { base: `http://127.0.0.1:${gateway.port}`, group, apps, registry };
}

describe('HTTP gateway', () => {
  it('routes calls to the registered providers, balanced, with the tagged JSON answer', async () => {
    const { base, group } = await setup();
    const headers = { 'x-callisto-group': group };
    const user = await post(`${base}/example.UserService/getUser`, '[5]', headers);
    expect(user.status).toBe(200);
    expect(user.json).toEqual({
      id: 5,
      name: 'user-5',
      born: { $t: 'D', v: 0 },
      balance: { $t: 'n', v: '100000000000000000000' },
    });
    const seen = new Set<string>();
    await waitFor(async () => {
      const answer = await post(`${base}/example.UserService/whoami`, '[]', headers);
      seen.add((answer.json as { provider: string }).provider);
      return seen.size === 2;
    });
  });

  it('fails over when a provider goes away', async () => {
    const { base, group, apps } = await setup();
    const headers = { 'x-callisto-group': group };
    // both providers known to the gateway first (the registry lists them one after the other)
    const seen = new Set<string>();
    await waitFor(async () => {
      const answer = await post(`${base}/example.UserService/whoami`, '[]', headers);
      seen.add((answer.json as { provider: string }).provider);
      return seen.size === 2;
    });
    apps[0]!.destroy();
    // an idempotent call is failed over even when it was sent to the provider that just went away
    for (let i = 0; i < 20; i++) {
      const answer = await post(`${base}/example.UserService/getUser`, `[${i}]`, headers);
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      expect(answer.json).toMatchObject({ id: i });
    }
    // and every call goes to the one left (a call that is not idempotent too, now that its connection
    // to the one that went is closed: one sent before that would fail rather than risk running twice)
    for (let i = 0; i < 20; i++) {
      const answer = await post(`${base}/example.UserService/whoami`, '[]', headers);
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      expect(answer.json).toEqual({ provider: 'users-1' });
    }
  });

  it('refuses services nobody provides and methods the providers do not declare, without calling', async () => {
    const called: string[] = [];
    const { base, group } = await setup(1, {
      app: {
        filters: {
          consumer: [
            defineFilter({
              name: 'seen',
              position: 'call',
              start: (invocation) => {
                called.push(invocation.method);
              },
            }),
          ],
        },
      },
    });
    const nobody = await post(`${base}/example.Nobody/getUser`, '[1]', { 'x-callisto-group': group });
    expect(nobody.status).toBe(404);
    expect(nobody.json).toMatchObject({ error: { code: 'ServiceNotFound' } });
    for (const name of ['secret', 'constructor', 'nope']) {
      const answer = await post(`${base}/example.UserService/${name}`, '[]', { 'x-callisto-group': group });
      expect(answer.status, name).toBe(404);
      expect(answer.json, name).toMatchObject({ error: { code: 'MethodNotFound' } });
    }
    // refused by the gateway itself: no reference was asked for them
    expect(called).toEqual([]);
    expect(
      (await post(`${base}/example.UserService/getUser`, '[1]', { 'x-callisto-group': group })).status,
    ).toBe(200);
    expect(called).toEqual(['getUser']);
  });

  it('routes at most maxServices service keys', async () => {
    const { base, group, registry } = await setup(1, { maxServices: 1 });
    const other = await testApp({ application: 'other', registry: [registry] });
    other.provide({ ...UserServiceDef, group: `${group}-other` } as typeof UserServiceDef, userService);
    await other.start();
    expect(
      (await post(`${base}/example.UserService/getUser`, '[1]', { 'x-callisto-group': group })).status,
    ).toBe(200);
    const refused = await post(`${base}/example.UserService/getUser`, '[1]', {
      'x-callisto-group': `${group}-other`,
    });
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: { code: 'Overloaded' } });
    expect((refused.json as { error: { message: string } }).error.message).toContain('maxServices');
  });

  it("passes the providers' errors with their code, attachments and the timeout", async () => {
    const { base, group } = await setup(1);
    const headers = { 'x-callisto-group': group };
    const refused = await post(`${base}/example.UserService/fail`, '["rpc"]', headers);
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: 'Unauthorized', message: 'no entry' } });
    const slow = await post(`${base}/example.UserService/slow`, '[10000]', {
      ...headers,
      'x-callisto-timeout-ms': '100',
    });
    expect(slow.status).toBe(504);
    expect(slow.json).toMatchObject({ error: { code: 'Timeout' } });
    const bad = await post(`${base}/example.UserService/getUser`, '{"id":1}', headers);
    expect(bad.status).toBe(400);
    const proto = await post(`${base}/example.UserService/getUser`, '[{"__proto__":{}}]', headers);
    expect(proto.status).toBe(400);
  });

  it('is called with curl', async () => {
    const { base, group } = await setup(1);
    const { stdout } = await run('curl', [
      '-sS',
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '-H',
      `x-callisto-group: ${group}`,
      '-d',
      '[42]',
      '-w',
      '\\n%{http_code}',
      `${base}/example.UserService/getUser`,
    ]);
    const [body, status] = stdout.trim().split('\n');
    expect(status).toBe('200');
    expect(JSON.parse(body!)).toMatchObject({ id: 42, name: 'user-42' });
  });

  it("is called from Python's standard library", async () => {
    const { base, group } = await setup(1);
    const script = `
import json, sys, urllib.request, urllib.error
base, group = sys.argv[1], sys.argv[2]
def call(method, args):
    req = urllib.request.Request(f"{base}/example.UserService/{method}", data=json.dumps(args).encode(),
        headers={"content-type": "application/json", "x-callisto-group": group}, method="POST")
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())
print(json.dumps([call("getUser", [9]), call("fail", ["rpc"]), call("nope", [])]))
`;
    const { stdout } = await run('python3', ['-c', script, base, group]);
    const [ok, refused, missing] = JSON.parse(stdout) as [number, { error?: { code: string } } & object][];
    expect(ok).toEqual([
      200,
      { id: 9, name: 'user-9', born: { $t: 'D', v: 0 }, balance: { $t: 'n', v: '100000000000000000000' } },
    ]);
    expect(refused![0]).toBe(401);
    expect(refused![1].error?.code).toBe('Unauthorized');
    expect(missing![0]).toBe(404);
  });
});

/**
 * HTTP/JSON in one runnable file: two providers of example.UserService registered in a file registry,
 * one of them also serving HTTP itself (`server.http`), and a standalone gateway (`createGateway`) that
 * routes HTTP calls to both. Every call below is a plain HTTP POST, as curl or any other stack makes it.
 *
 *   npx tsx examples/http-gateway/run.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto, createGateway } from '../../src/index.js';
import { UserServiceDef } from '../contract/user-service.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-http-example-'));
const registry = `file://${dir}`;
const quiet = { logLevel: 'warn', load: { configFile: false } } as const;

async function startProvider(name: string, http: boolean) {
  const app = await callisto({
    ...quiet,
    application: name,
    registry: [registry],
    ...(http ? { server: { http: { port: 0 } } } : {}),
  });
  app.provide(UserServiceDef, {
    getUser: (id) => ({
      id,
      name: `user-${id}`,
      email: `user${id}@example.com`,
      joinedAt: new Date(1_700_000_000_000),
    }),
    say: (message) => `${name} says ${message}`,
    whoAmI: () => name,
  });
  return app.start();
}

/** One HTTP call: POST /<service>/<method> with a JSON array; prints the curl command and the answer. */
async function call(base: string, method: string, args: unknown[], headers: Record<string, string> = {}) {
  const body = JSON.stringify(args);
  const extra = Object.entries(headers)
    .map(([key, value]) => ` -H '${key}: ${value}'`)
    .join('');
  console.log(
    `$ curl -X POST -H 'content-type: application/json'${extra} -d '${body}' ${base}/example.UserService/${method}`,
  );
  const response = await fetch(`${base}/example.UserService/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  console.log(`  ${response.status} ${text}`);
  return text;
}

const users1 = await startProvider('users-1', true);
const users2 = await startProvider('users-2', false);
const entry = `http://127.0.0.1:${users1.httpPort}`;
console.log(
  `users-1 serves Callisto on ${users1.address} and HTTP on ${entry}; users-2 on ${users2.address}`,
);

console.log("\n# the provider's own HTTP entry (its filters and limits apply)");
await call(entry, 'getUser', [7]);
await call(entry, 'say', ['hello'], { 'x-callisto-attachment-trace-id': 'abc123' });
await call(entry, 'nope', []);
await call(entry, 'getUser', { id: 7 } as never);

const gateway = await createGateway({
  registry,
  port: 0,
  app: { ...quiet, consumer: { loadbalance: 'roundrobin' } },
});
const base = `http://127.0.0.1:${gateway.port}`;
console.log(`\n# the gateway on ${base}, routing to the providers the registry lists`);
const answered = new Set<string>();
for (let i = 0; i < 4; i++) answered.add(await call(base, 'whoAmI', []));
console.log(`answered by ${[...answered].sort().join(' and ')}`);
await call(base, 'getUser', [8], { 'x-callisto-timeout-ms': '1000' });
await call(base, 'nope', []);

await gateway.close();
await Promise.all([users1.close(), users2.close()]);
fs.rmSync(dir, { recursive: true, force: true });
console.log('\nclosed');

/**
 * A Callisto provider called over gRPC by a Python client (grpcio): the service is declared with the
 * same .proto the client's stubs are made from, and served on the provider's own port next to
 * Callisto's protocol (docs/grpc.md). Needs Debian's python3-grpcio and python3-grpc-tools.
 *
 *   npx tsx examples/grpc/run.ts
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import protobuf from 'protobufjs';
import { callisto, defineService, RpcError } from '../../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
// asynchronous: the provider answers in this same process while Python runs
const run = promisify(execFile);

interface Greeter {
  sayHello(name: string): Promise<{ message: string }>;
  countTo(n: number): AsyncIterable<number>;
}

const GreeterDef = defineService<Greeter>('callisto.example.Greeter', {
  methods: { sayHello: {}, countTo: { stream: 'server' } },
  protobuf: protobuf.loadSync(path.join(here, 'greeter.proto')),
});

const app = await callisto({
  application: 'greeter',
  logLevel: 'silent',
  load: { configFile: false, env: false },
});
app.provide(GreeterDef, {
  async sayHello(name) {
    if (!name) throw new RpcError('BadRequest', 'a name, please');
    return { message: `hello ${name}` };
  },
  async *countTo(n) {
    for (let i = 1; i <= n; i++) yield i;
  },
});
await app.start();
console.log(`gRPC and Callisto on 127.0.0.1:${app.grpcPort} (the same port: ${app.grpcPort === app.port})`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-grpc-example-'));
try {
  fs.copyFileSync(path.join(here, 'greeter.proto'), path.join(dir, 'greeter.proto'));
  fs.copyFileSync(path.join(here, 'client.py'), path.join(dir, 'client.py'));
  await run(
    PYTHON,
    [
      '-m',
      'grpc_tools.protoc',
      `-I${dir}`,
      `--python_out=${dir}`,
      `--grpc_python_out=${dir}`,
      'greeter.proto',
    ],
    { cwd: dir },
  );
  const { stdout } = await run(PYTHON, ['client.py', `127.0.0.1:${app.grpcPort}`], { cwd: dir });
  process.stdout.write(stdout);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await app.close();
  console.log('closed');
}

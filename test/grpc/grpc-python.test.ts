/**
 * Python's C-core grpcio (Debian's /usr/bin/python3) as the client of the gRPC entry: stubs compiled
 * at test time from the .proto with grpc_tools.protoc, then unary, every stream kind, metadata both
 * ways, an error's status and a deadline, over a real socket. Skipped, saying so, only when
 * /usr/bin/python3 cannot import grpc (scripts/services/install.sh installs it).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { GREETER_PROTO, GreeterDef, greeterImpl, newSeen } from './greeter.js';

const PYTHON = '/usr/bin/python3';
const run = promisify(execFile);

function pythonHasGrpc(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

const available = pythonHasGrpc();
if (!available) {
  console.warn(
    `skipping the grpcio interop tests: ${PYTHON} cannot import grpc and grpc_tools (scripts/services/install.sh installs python3-grpcio and python3-grpc-tools)`,
  );
}

const CLIENT = `
import json, sys, grpc
import greeter_pb2 as pb, greeter_pb2_grpc as rpc

port = sys.argv[1]
out = {}
with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
    stub = rpc.GreeterStub(channel)
    reply, call = stub.sayHello.with_call(pb.HelloRequest(name="py"), metadata=(("x-tenant", "snake"),))
    out["unary"] = reply.message
    out["trailer"] = dict(call.trailing_metadata()).get("x-greeted")
    out["server"] = [c.value for c in stub.countTo(pb.CountRequest(n=5))]
    out["client"] = stub.sum(iter([pb.Count(value=v) for v in range(1, 11)])).total
    out["bidi"] = [c.value for c in stub.echo(iter([pb.Count(value=v) for v in (1, 2, 3)]))]
    try:
        stub.fail(pb.FailRequest(code="Unauthorized"))
    except grpc.RpcError as error:
        out["error"] = [error.code().name, error.details()]
    try:
        stub.slow(pb.SlowRequest(ms=10000), timeout=0.3)
    except grpc.RpcError as error:
        out["deadline"] = error.code().name
print(json.dumps(out))
`;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-grpc-py-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(closeAll);

describe.skipIf(!available)('gRPC entry: Python grpcio (C-core) as the client', () => {
  it('calls unary and every stream kind, with metadata, status and deadline', async () => {
    fs.copyFileSync(GREETER_PROTO, path.join(dir, 'greeter.proto'));
    await run(PYTHON, [
      '-m',
      'grpc_tools.protoc',
      `-I${dir}`,
      `--python_out=${dir}`,
      `--grpc_python_out=${dir}`,
      path.join(dir, 'greeter.proto'),
    ]);
    fs.writeFileSync(path.join(dir, 'client.py'), CLIENT);
    const seen = newSeen();
    const app = await testApp();
    app.provide(GreeterDef, greeterImpl(seen));
    await app.start();
    const { stdout } = await run(PYTHON, [path.join(dir, 'client.py'), String(app.grpcPort)], {
      cwd: dir,
      timeout: 60_000,
    });
    const out = JSON.parse(stdout);
    expect(out).toEqual({
      unary: 'hello py',
      trailer: 'py',
      server: [1, 2, 3, 4, 5],
      client: 55,
      bidi: [10, 20, 30],
      error: ['UNAUTHENTICATED', 'failed with Unauthorized'],
      deadline: 'DEADLINE_EXCEEDED',
    });
    expect(seen.attachments[0]).toMatchObject({ 'x-tenant': 'snake' });
  }, 90_000);
});

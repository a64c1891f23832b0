/**
 * The gRPC bench's client-driven rows: `client.ts <client> <port> <calls> <concurrency>` keeps
 * `concurrency` `getUser(42)` calls in flight until `calls` are answered (after a warm-up of a tenth
 * as many), then prints `{"callsPerSecond": …}`. Clients: `grpc-js` (@grpc/grpc-js with proto-loader),
 * `callisto-grpc` (a Callisto consumer referring to the server with `grpc://`), `callisto-wire` (the
 * same consumer over Callisto's own protocol, the server's port told apart by its preface). Prints
 * `MEASURE` when the measured calls start, so the harness reads the server's CPU from then.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { callisto, createProtobufSerializer } from '../../src/index.js';
import { ProtobufBenchServiceDef } from '../systems/callisto-protobuf/service.js';

type GetUser = () => Promise<unknown>;

async function grpcJsClient(port: number): Promise<{ call: GetUser; close(): void }> {
  const protoPath = fileURLToPath(new URL('../systems/callisto-protobuf/bench.proto', import.meta.url));
  const definition = protoLoader.loadSync(protoPath, { keepCase: true, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    bench: { UserService: grpc.ServiceClientConstructor };
  };
  const client = new loaded.bench.UserService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const getUser = (
    client as unknown as {
      getUser(request: object, done: (error: grpc.ServiceError | null, answer: unknown) => void): void;
    }
  ).getUser.bind(client);
  return {
    call: () =>
      new Promise((resolve, reject) =>
        getUser({ id: 42 }, (error, answer) => (error ? reject(error) : resolve(answer))),
      ),
    close: () => client.close(),
  };
}

async function callistoClient(port: number, overGrpc: boolean): Promise<{ call: GetUser; close(): unknown }> {
  const app = await callisto({
    application: 'bench-grpc-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
  });
  const ref = overGrpc
    ? app.refer(ProtobufBenchServiceDef, { url: `grpc://127.0.0.1:${port}`, timeoutMs: 30_000 })
    : app.refer(ProtobufBenchServiceDef, {
        url: `127.0.0.1:${port}`,
        timeoutMs: 30_000,
        serializer: 'protobuf',
      });
  return { call: () => ref.getUser(42), close: () => app.close() };
}

async function drive(call: GetUser, calls: number, concurrency: number): Promise<number> {
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < calls) {
      started++;
      await call();
    }
  };
  const begin = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return (calls * 1000) / (performance.now() - begin);
}

const [kind, portText, callsText, concurrencyText] = process.argv.slice(2);
const port = Number(portText);
const calls = Number(callsText);
const concurrency = Number(concurrencyText);
const client =
  kind === 'grpc-js'
    ? await grpcJsClient(port)
    : kind === 'callisto-grpc' || kind === 'callisto-wire'
      ? await callistoClient(port, kind === 'callisto-grpc')
      : undefined;
if (client === undefined) throw new Error(`unknown client ${kind} (grpc-js, callisto-grpc, callisto-wire)`);
await drive(client.call, Math.max(100, Math.round(calls / 10)), concurrency);
process.stdout.write('MEASURE\n');
const callsPerSecond = await drive(client.call, calls, concurrency);
process.stdout.write(`${JSON.stringify({ callsPerSecond })}\n`);
await client.close();
process.exit(0);

/**
 * The gRPC benchmark (`npm run bench:grpc`, bench/README.md "gRPC"): gRPC servers measured by the
 * same native load generator, so that the server is what is compared. For every server it starts the
 * server pinned to CPU 0, checks one call with grpc-js, then runs `h2load` pinned to CPU 1 with the
 * same pre-encoded `getUser(42)` request (warm-up, then the measured run) and reports calls/s and the
 * server's CPU per call. Writes bench/results/grpc.json.
 *
 * Then the client-driven rows (CLIENT_ROWS, client.ts): grpc-js's client against grpc-js and Callisto, a
 * Callisto consumer against Callisto over gRPC and over its own protocol.
 *
 * Environment: BENCH_SCALE (request-count multiplier), BENCH_RUNS (runs per server, median reported),
 * BENCH_PIN=0 (no pinning), GRPC_BENCH_SERVERS (comma-separated names, default all),
 * GRPC_BENCH_CLIENTS=0 (no client-driven rows), BENCH_PROFILE=<dir> (V8 CPU profiles of every child).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { choosePinning, runClientOutcome, startServer } from '../lib/processes.js';
import { hasH2load, runH2load } from './h2load.js';

const here = dirname(fileURLToPath(import.meta.url));
const protoPath = join(here, '..', 'systems', 'callisto-protobuf', 'bench.proto');

/** The servers compared: name → server script (a runServerMain script printing READY <port>). */
export const GRPC_SERVERS: Readonly<Record<string, string>> = {
  'grpc-js': join(here, 'grpc-js-server.ts'),
  callisto: join(here, 'callisto-grpc-server.ts'),
  'http2-bare': join(here, 'http2-bare-server.ts'),
};

/** GetUserRequest { id: 42 } in protobuf: field 1, varint 42. */
const GET_USER_42 = Uint8Array.of(0x08, 0x2a);
const PATH = '/bench.UserService/getUser';
const CONNECTIONS = 4;
const STREAMS_PER_CONNECTION = 64;
const REQUESTS = 200_000;

interface ServerOutcome {
  readonly server: string;
  readonly callsPerSecond: number;
  readonly serverCpuUsPerCall: number | undefined;
  readonly failed: number;
  readonly runs: ReadonlyArray<{ callsPerSecond: number; serverCpuUsPerCall: number | undefined }>;
}

type UnaryCall = (
  request: object,
  options: grpc.CallOptions,
  done: (error: grpc.ServiceError | null, answer: unknown) => void,
) => void;

/** One grpc-js call, to prove the server answers the request h2load will send. */
async function checkAnswer(port: number): Promise<void> {
  const definition = protoLoader.loadSync(protoPath, { keepCase: true, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    bench: { UserService: grpc.ServiceClientConstructor };
  };
  const client = new loaded.bench.UserService(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const user = await new Promise<{ id: number; name: string }>((resolve, reject) => {
      const getUser = (client as unknown as { getUser: UnaryCall }).getUser.bind(client);
      getUser({ id: 42 }, { deadline: Date.now() + 5000 }, (error, answer) =>
        error ? reject(error) : resolve(answer as { id: number; name: string }),
      );
    });
    if (user.id !== 42 || user.name !== 'user-42')
      throw new Error(`unexpected answer ${JSON.stringify(user)}`);
  } finally {
    client.close();
  }
}

function median<T>(values: readonly T[], by: (value: T) => number): T {
  const sorted = [...values].sort((a, b) => by(a) - by(b));
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(name: string, script: string, scale: number, runs: number, pin: boolean) {
  const pinning = choosePinning(!pin);
  const results: Array<{ callsPerSecond: number; serverCpuUsPerCall: number | undefined; failed: number }> =
    [];
  for (let run = 0; run < runs; run++) {
    const server = await startServer(script, pinning, 30_000);
    try {
      await checkAnswer(server.port);
      const base = {
        url: `http://127.0.0.1:${server.port}${PATH}`,
        message: GET_USER_42,
        connections: CONNECTIONS,
        streamsPerConnection: STREAMS_PER_CONNECTION,
        prefix: pinning.client,
        timeoutMs: 120_000,
      };
      await runH2load({ ...base, requests: Math.max(1000, Math.round(REQUESTS * scale * 0.1)) });
      const cpuBefore = server.cpuMs();
      const requests = Math.max(1000, Math.round(REQUESTS * scale));
      const result = await runH2load({ ...base, requests });
      const cpuAfter = server.cpuMs();
      results.push({
        callsPerSecond: result.requestsPerSecond,
        serverCpuUsPerCall:
          cpuBefore === undefined || cpuAfter === undefined
            ? undefined
            : ((cpuAfter - cpuBefore) * 1000) / requests,
        failed: result.failed,
      });
    } finally {
      await server.stop();
    }
  }
  const chosen = median(results, (r) => r.callsPerSecond);
  return {
    server: name,
    callsPerSecond: chosen.callsPerSecond,
    serverCpuUsPerCall: chosen.serverCpuUsPerCall,
    failed: chosen.failed,
    runs: results.map(({ callsPerSecond, serverCpuUsPerCall }) => ({ callsPerSecond, serverCpuUsPerCall })),
  } satisfies ServerOutcome;
}

/**
 * The client-driven rows: a client against a server, same call and concurrency. grpc-js's client
 * against both servers (Callisto's entry no slower), and a Callisto consumer against Callisto's provider
 * over gRPC and over Callisto's own protocol (the cost of HTTP/2).
 */
export const CLIENT_ROWS: ReadonlyArray<{ readonly client: string; readonly server: string }> = [
  { client: 'grpc-js', server: 'grpc-js' },
  { client: 'grpc-js', server: 'callisto' },
  { client: 'callisto-grpc', server: 'callisto' },
  { client: 'callisto-wire', server: 'callisto' },
];
const CLIENT_CALLS = 40_000;
const CLIENT_CONCURRENCY = 64;

interface ClientOutcome {
  readonly client: string;
  readonly server: string;
  readonly callsPerSecond: number;
  readonly serverCpuUsPerCall: number | undefined;
}

async function measureClient(
  row: { client: string; server: string },
  scale: number,
  pin: boolean,
): Promise<ClientOutcome> {
  const pinning = choosePinning(!pin);
  const server = await startServer(GRPC_SERVERS[row.server]!, pinning, 30_000);
  try {
    const calls = Math.max(1000, Math.round(CLIENT_CALLS * scale));
    let cpuBefore: number | undefined;
    const result = (await runClientOutcome(
      join(here, 'client.ts'),
      [row.client, String(server.port), String(calls), String(CLIENT_CONCURRENCY)],
      pinning,
      180_000,
      () => {
        cpuBefore = server.cpuMs();
      },
    )) as unknown as { callsPerSecond: number };
    const cpuAfter = server.cpuMs();
    return {
      ...row,
      callsPerSecond: result.callsPerSecond,
      serverCpuUsPerCall:
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : ((cpuAfter - cpuBefore) * 1000) / calls,
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const env = process.env;
  const scale = env.BENCH_SCALE ? Number(env.BENCH_SCALE) : 1;
  const runs = env.BENCH_RUNS ? Number(env.BENCH_RUNS) : 1;
  if (!(scale > 0) || !Number.isInteger(runs) || runs < 1) throw new Error('BENCH_SCALE > 0, BENCH_RUNS ≥ 1');
  if (!(await hasH2load())) {
    console.log('h2load is not installed (Debian nghttp2-client; scripts/services/install.sh installs it)');
    process.exitCode = 1;
    return;
  }
  const wanted = env.GRPC_BENCH_SERVERS?.split(',').map((name) => name.trim()) ?? Object.keys(GRPC_SERVERS);
  const outcomes: ServerOutcome[] = [];
  for (const name of wanted) {
    const script = GRPC_SERVERS[name];
    if (script === undefined)
      throw new Error(`unknown gRPC bench server ${name} (${Object.keys(GRPC_SERVERS).join(', ')})`);
    outcomes.push(await measure(name, script, scale, runs, env.BENCH_PIN !== '0'));
  }
  const reference = outcomes.find((o) => o.server === 'grpc-js');
  console.log(
    `\ngRPC: h2load, getUser(42) pre-encoded, ${CONNECTIONS} connections × ${STREAMS_PER_CONNECTION} streams, ${Math.round(REQUESTS * scale)} calls`,
  );
  console.log('server            calls/s   vs grpc-js   server CPU µs/call   failed');
  for (const o of outcomes) {
    const ratio = reference ? `${(o.callsPerSecond / reference.callsPerSecond).toFixed(2)}×` : '-';
    const cpu = o.serverCpuUsPerCall === undefined ? '-' : o.serverCpuUsPerCall.toFixed(1);
    console.log(
      `${o.server.padEnd(16)} ${Math.round(o.callsPerSecond).toLocaleString('en-US').padStart(9)}   ${ratio.padStart(10)}   ${cpu.padStart(18)}   ${String(o.failed).padStart(6)}`,
    );
  }
  const clients: ClientOutcome[] = [];
  if (env.GRPC_BENCH_CLIENTS !== '0') {
    for (const row of CLIENT_ROWS) {
      if (!wanted.includes(row.server)) continue;
      clients.push(await measureClient(row, scale, env.BENCH_PIN !== '0'));
    }
    console.log(
      `\nclient → server, getUser(42), ${CLIENT_CONCURRENCY} calls in flight, ${Math.max(1000, Math.round(CLIENT_CALLS * scale))} calls`,
    );
    console.log('client          → server        calls/s   server CPU µs/call');
    for (const c of clients) {
      const cpu = c.serverCpuUsPerCall === undefined ? '-' : c.serverCpuUsPerCall.toFixed(1);
      console.log(
        `${c.client.padEnd(15)} → ${c.server.padEnd(10)} ${Math.round(c.callsPerSecond).toLocaleString('en-US').padStart(9)}   ${cpu.padStart(18)}`,
      );
    }
  }
  const output = join(here, '..', 'results', 'grpc.json');
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, `${JSON.stringify({ scale, runs, outcomes, clients }, null, 2)}\n`);
}

await main();

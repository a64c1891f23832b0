/**
 * Runs nghttp2's `h2load` (Debian `nghttp2-client`), a native HTTP/2 load generator, against a gRPC
 * server: the same pre-encoded gRPC request on every stream, so that what is measured is the server.
 * The request body is one length-prefixed message written to a temporary file (`h2load -d`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface H2loadRun {
  /** `http://127.0.0.1:<port>/<package.Service>/<method>` */
  readonly url: string;
  /** The gRPC request message (already protobuf-encoded, without its 5-byte prefix). */
  readonly message: Uint8Array;
  readonly requests: number;
  /** Connections (`-c`) and streams in flight per connection (`-m`). */
  readonly connections: number;
  readonly streamsPerConnection: number;
  /** A command prefix such as `taskset -c 1`. */
  readonly prefix: readonly string[];
  readonly timeoutMs: number;
}

export interface H2loadResult {
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** Whether h2load is installed. */
export async function hasH2load(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn('h2load', ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** The gRPC frame of `message`: flag 0, 4-byte big-endian length, the message. */
function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

export async function runH2load(run: H2loadRun): Promise<H2loadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-h2load-'));
  const body = join(dir, 'request.bin');
  writeFileSync(body, grpcFrame(run.message));
  const args = [
    ...run.prefix,
    'h2load',
    '-n',
    String(run.requests),
    '-c',
    String(run.connections),
    '-m',
    String(run.streamsPerConnection),
    '-d',
    body,
    '-H',
    'content-type: application/grpc',
    '-H',
    'te: trailers',
    run.url,
  ];
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(args[0]!, args.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(text);
        else reject(new Error(`h2load exited ${code}:\n${text.slice(-2000)}`));
      });
    });
    return parseH2load(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads `finished in 2.31s, 86580.00 req/s` and `requests: … N succeeded, M failed`. */
export function parseH2load(output: string): H2loadResult {
  const finished = /finished in ([\d.]+)(m?s), ([\d.]+) req\/s/.exec(output);
  const requests = /requests: .*?(\d+) succeeded, (\d+) failed/.exec(output);
  if (finished === null || requests === null) {
    throw new Error(`cannot read h2load's output:\n${output.slice(-2000)}`);
  }
  const seconds = Number(finished[1]) / (finished[2] === 'ms' ? 1000 : 1);
  return {
    seconds,
    requestsPerSecond: Number(finished[3]),
    succeeded: Number(requests[1]),
    failed: Number(requests[2]),
  };
}

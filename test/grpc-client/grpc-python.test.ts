/**
 * Interop with Python's grpcio (C-core) as the server, nobody here wrote it: the JSON-bodied
 * `test.Json` service (`application/grpc+json`, the arguments as a JSON array), answering
 * gzip-compressed (grpc-js's server never compresses): Callisto's consumer inflates it, reads the
 * trailers' metadata. Skipped where Debian's /usr/bin/python3 has no grpcio
 * (scripts/services/install.sh installs it).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Attachments, Filter } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { JsonService } from './support.js';

const PYTHON = '/usr/bin/python3';
const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/json_server.py');

const hasGrpcio = (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import grpc'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const children: ChildProcess[] = [];
afterEach(async () => {
  await closeAll();
  for (const child of children.splice(0)) {
    child.stdin?.end();
    child.kill();
  }
});

async function pythonServer(): Promise<string> {
  const child = spawn(PYTHON, [SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const port = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the grpcio server exited with ${code}`)));
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
  });
  return `grpc://127.0.0.1:${port}`;
}

describe.skipIf(!hasGrpcio)('gRPC consumer: Python grpcio as the server', () => {
  it('calls grpc+json methods, reads gzip-compressed answers and trailers', async () => {
    const url = await pythonServer();
    const seen: Attachments[] = [];
    const recorder: Filter = (next) => async (invocation) => {
      try {
        return await next(invocation);
      } finally {
        seen.push({ ...invocation.responseAttachments });
      }
    };
    const consumer = await testApp({ filters: { consumer: [recorder] } });
    const json = consumer.refer(JsonService, { url, retries: 0 });
    expect(await json.add(2, 40)).toBe(42);
    const info = (await json.info()) as { name: string; tags: string[]; padding: string };
    expect(info.name).toBe('grpcio');
    expect(info.tags).toEqual(['a', 'b']);
    expect(info.padding).toHaveLength(100_000);
    expect(seen[1]).toMatchObject({ 'x-served-by': 'grpcio' });
  });
});

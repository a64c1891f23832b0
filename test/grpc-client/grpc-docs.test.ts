/**
 * docs/grpc-consumer.md's status table is the consumer's mapping (protocol/grpc/status.ts `rpcCodeOf`):
 * a change to one without the other fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GrpcStatus, type GrpcStatusName, rpcCodeOf } from '../../src/protocol/grpc/status.js';

const DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../docs/grpc-consumer.md');

describe('docs/grpc-consumer.md', () => {
  it('lists every gRPC status with the code the consumer reads it as', () => {
    const text = fs.readFileSync(DOC, 'utf8');
    const rows = new Map<string, string>();
    for (const match of text.matchAll(/^\| ([A-Z_]+) \((\d+)\) \| `(\w+)` \|/gm)) {
      rows.set(match[1]!, match[3]!);
      expect(GrpcStatus[match[1] as GrpcStatusName]).toBe(Number(match[2]));
    }
    const names = (Object.keys(GrpcStatus) as GrpcStatusName[]).filter((name) => name !== 'OK');
    expect([...rows.keys()].sort()).toEqual([...names].sort());
    for (const name of names)
      expect({ name, code: rows.get(name) }).toEqual({ name, code: rpcCodeOf(GrpcStatus[name]) });
  });
});

/**
 * docs/grpc.md's status tables are GRPC_STATUS_TABLES (src/protocol/grpc/status.ts), row for row: the
 * page cannot say one mapping while the entry answers another.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GRPC_STATUS_TABLES, GrpcStatus, grpcStatusName } from '../../src/protocol/grpc/status.js';

const page = fs.readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '../../docs/grpc.md'),
  'utf8',
);

/** The rows of the table between `<!-- name:start -->` and `<!-- name:end -->`, as [first, second] cells. */
function rows(name: string): string[][] {
  const start = page.indexOf(`<!-- ${name}:start -->`);
  const end = page.indexOf(`<!-- ${name}:end -->`);
  expect(start, name).toBeGreaterThan(0);
  return page
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) =>
      line
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim()),
    );
}

describe('docs/grpc.md status tables', () => {
  it('Callisto code → gRPC status is the table the entry answers with', () => {
    const documented = rows('status-to-grpc').map(([code, status]) => [code!.replaceAll('`', ''), status]);
    const actual = Object.entries(GRPC_STATUS_TABLES.toGrpc).map(([code, status]) => [
      code,
      `${grpcStatusName(status)} (${status})`,
    ]);
    expect(documented).toEqual(actual);
  });

  it('gRPC status → Callisto code is the table consumers map with', () => {
    const documented = rows('status-from-grpc').map(([status, code]) => [status, code!.split('`')[1]]);
    const actual = Object.entries(GRPC_STATUS_TABLES.fromGrpc).map(([status, code]) => [
      `${status} (${GrpcStatus[status as keyof typeof GrpcStatus]})`,
      code,
    ]);
    expect(documented).toEqual(actual);
  });
});

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/http-gateway', () => {
  it('runs: a provider serving HTTP itself, and a gateway routing HTTP calls to two providers', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/http-gateway/run.ts'],
      { timeout: 30_000 },
    );
    expect(stdout).toMatch(
      /users-1 serves Callisto on 127\.0\.0\.1:\d+ and HTTP on http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(stdout).toContain(
      '200 {"id":7,"name":"user-7","email":"user7@example.com","joinedAt":{"$t":"D","v":1700000000000}}',
    );
    expect(stdout).toContain('200 "users-1 says hello"');
    expect(stdout).toMatch(/404 \{"error":\{"code":"MethodNotFound"/);
    expect(stdout).toMatch(
      /400 \{"error":\{"code":"BadRequest","name":"RpcError","message":"example\.UserService\.getUser: arguments must be an array"/,
    );
    expect(stdout).toContain('answered by "users-1" and "users-2"');
    expect(stdout).toContain('200 {"id":8,"name":"user-8"');
    expect(stdout).toContain('closed');
  }, 40_000);
});

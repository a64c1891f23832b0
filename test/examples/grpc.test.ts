import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const pythonHasGrpc = (() => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import grpc, grpc_tools'], { stdio: 'pipe' });
    return true;
  } catch {
    console.warn(
      'skipping examples/grpc: /usr/bin/python3 cannot import grpc and grpc_tools (scripts/services/install.sh installs them)',
    );
    return false;
  }
})();

describe.skipIf(!pythonHasGrpc)('examples/grpc', () => {
  it('runs: a Python grpcio client calls a Callisto provider on its own port', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/grpc/run.ts'],
      {
        timeout: 60_000,
      },
    );
    expect(stdout).toMatch(/gRPC and Callisto on 127\.0\.0\.1:\d+ \(the same port: true\)/);
    expect(stdout).toContain('python: sayHello -> hello python');
    expect(stdout).toContain('python: countTo(3) -> 1, 2, 3');
    expect(stdout).toContain("python: sayHello('') -> INVALID_ARGUMENT: a name, please");
    expect(stdout).toContain('closed');
  }, 70_000);
});

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/quickstart', () => {
  it('runs and prints what the README promises', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/quickstart/run.ts'],
      {
        timeout: 30_000,
      },
    );
    expect(stdout).toContain('get(1) -> owner ann, balance 100 (bigint)');
    expect(stdout).toContain('withdraw(1, 1000n) -> ProviderError InsufficientFunds');
    expect(stdout).toContain('statement(1, 13) -> BadRequest');
    expect(stdout).toContain('with a 150 ms timeout -> Timeout');
    expect(stdout).toContain('mock get(9) -> owner mock');
    expect(stdout).toContain('closed');
  }, 40_000);
});

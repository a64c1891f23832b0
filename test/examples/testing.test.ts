import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/testing', () => {
  it('unit-tests the checkout with the test kit, every check passing', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/testing/run.ts'],
      { timeout: 60_000 },
    );
    expect(stdout.split('\n').filter((line) => line.startsWith('ok - '))).toHaveLength(4);
    expect(stdout).not.toContain('not ok');
  }, 70_000);
});

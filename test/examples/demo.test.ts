import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the demo (npm run demo)', () => {
  it('spreads calls over three providers and carries on when one stops, with no failed call', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/run.ts'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(output).toContain('Done: every call succeeded.');
    expect(output).toMatch(/provider-a\s+100 calls/);
    expect(code).toBe(0);
  }, 60_000);
});

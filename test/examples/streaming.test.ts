import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/streaming', () => {
  it('runs: server, client and two-way streams, a break that cancels, an error mid-stream', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/streaming/run.ts'],
      { timeout: 30_000 },
    );
    expect(stdout).toContain('watch(ACME) -> 100, 101, 102');
    expect(stdout).toContain('provider: watch(ACME) ended, signal aborted: true');
    expect(stdout).toContain('upload -> greeting.txt, 21 bytes');
    expect(stdout).toContain('chat -> echo: hi\nchat -> echo: how are you?\nchat -> bye');
    expect(stdout).toContain('limited(2) -> 0, 1 then ProviderError RangeError: only 2 today');
    expect(stdout).toContain('closed');
  }, 40_000);
});

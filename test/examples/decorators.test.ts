import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/decorators', () => {
  it('runs: decorated classes provided and called through decorated fields, over a file registry', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'examples/decorators/run.ts'],
      { timeout: 30_000 },
    );
    expect(stdout).toMatch(/users serving on 127\.0\.0\.1:\d+, greetings on 127\.0\.0\.1:\d+/);
    expect(stdout).toContain(
      'before registerDecorated: WebController.greetings is @RpcReference(example.GreetingService:1.0.0), not bound to an app yet',
    );
    expect(stdout).toContain('web.page(7) -> Hello, user-7! <user7@example.com> joined 2023-11-14');
    expect(stdout).toContain("greetings' own reference: users says hi");
    expect(stdout).toContain('registered example.GreetingService with tags {"team":"growth"}');
    expect(stdout).toContain('closed');
  }, 40_000);
});

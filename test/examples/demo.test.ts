import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

interface Demo {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

const demos: Demo[] = [];

// Whatever a test did, nothing it started outlives it (a failing test may leave providers behind).
afterEach(() => {
  for (const demo of demos.splice(0)) {
    demo.child.kill('SIGKILL');
    for (const pid of providerPids(demo.output()).filter(alive)) process.kill(pid, 'SIGKILL');
    const dir = /embedded registry at (\S+)/.exec(demo.output())?.[1];
    if (dir?.includes('callisto-demo-')) fs.rmSync(dir, { recursive: true, force: true });
  }
});

function startDemo(): Demo {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/run.ts'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const demo = { child, output: () => output, exit };
  demos.push(demo);
  return demo;
}

const providerPids = (output: string): number[] =>
  [...output.matchAll(/provider-\w listening on \S+ \(pid (\d+)\)/g)].map((match) => Number(match[1]));

describe('the demo (npm run demo)', () => {
  it('spreads calls over three providers and carries on when one stops, with no failed call, and leaves no provider running', async () => {
    const demo = startDemo();
    const code = await waitFor(
      () => (demo.child.exitCode !== null ? { code: demo.child.exitCode } : undefined),
      50_000,
      { message: 'the demo did not exit' },
    ).then((exited) => exited.code);
    const output = demo.output();
    expect(output).toContain('Done: every call succeeded.');
    expect(output).toMatch(/provider-a\s+100 calls/);
    expect(output).toContain('All providers stopped.');
    expect(code).toBe(0);
    const pids = providerPids(output);
    expect(pids).toHaveLength(3);
    // Reaped before the demo exited: none is left the moment it is gone.
    expect(pids.filter(alive)).toEqual([]);
  }, 60_000);

  it('takes its providers down with it when it is killed outright (SIGKILL)', async () => {
    const demo = startDemo();
    const pids = await waitFor(
      () => (providerPids(demo.output()).length === 3 ? providerPids(demo.output()) : undefined),
      30_000,
    );
    expect(pids.filter(alive)).toHaveLength(3);
    demo.child.kill('SIGKILL');
    await demo.exit;
    // Nothing of the demo ran after SIGKILL: each provider notices its lifeline (stdin) closed.
    await waitFor(() => pids.filter(alive).length === 0, 20_000, {
      message: `providers still running: ${pids.filter(alive).join(', ')}`,
    });
  }, 60_000);
});

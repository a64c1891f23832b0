/**
 * The namespace harness cleans up after itself: a network whose owner was killed (SIGKILL, no cleanup
 * ran) is swept by the next createNetwork(), its processes included; one whose owner exited without
 * closing it is removed by the exit hook; close() is idempotent; two networks get different subnets.
 */
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { createNetwork, type HostNetwork } from './support/netns.js';

const OWNER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/network-owner.ts');
const opened: HostNetwork[] = [];

afterAll(async () => {
  for (const network of opened) await network.close();
});

function namespaces(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '');
}

function bridgeExists(subnet: string): boolean {
  return execFileSync('ip', ['-4', 'addr'], { encoding: 'utf8' }).includes(`${subnet}.1/24`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs the owner fixture; resolves with what it reported once READY, and the child. */
async function startOwner(mode: 'wait' | 'exit') {
  const child = spawn(process.execPath, ['--import', 'tsx', OWNER, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY .*/.exec(out);
      if (match) resolve(match[0]);
    });
    child.once('exit', () => reject(new Error(`owner exited before READY: ${out}`)));
  });
  const [, subnet, nsA, nsB, pid] = line.trim().split(' ');
  return { child, exited, subnet: subnet!, namespaces: [nsA!, nsB!], sleeper: Number(pid) };
}

describe('multi-host harness: namespaces are cleaned up', () => {
  it('sweeps the network of a killed run (namespaces, bridge, processes inside)', async () => {
    const owner = await startOwner('wait');
    expect(namespaces()).toEqual(expect.arrayContaining(owner.namespaces));
    expect(bridgeExists(owner.subnet)).toBe(true);
    expect(alive(owner.sleeper)).toBe(true);
    owner.child.kill('SIGKILL');
    await owner.exited;
    // nothing cleaned up by the dead owner
    expect(namespaces()).toEqual(expect.arrayContaining(owner.namespaces));

    const next = await createNetwork(); // sweeps first
    opened.push(next);
    expect(namespaces().filter((name) => owner.namespaces.includes(name))).toEqual([]);
    expect(bridgeExists(owner.subnet)).toBe(false);
    await waitFor(() => !alive(owner.sleeper), 5_000, {
      message: 'the process left in the namespace is killed',
    });
  }, 60_000);

  it('removes the network of a run that exits without closing it', async () => {
    const owner = await startOwner('exit');
    await owner.exited;
    expect(namespaces().filter((name) => owner.namespaces.includes(name))).toEqual([]);
    expect(bridgeExists(owner.subnet)).toBe(false);
    await waitFor(() => !alive(owner.sleeper), 5_000, {
      message: 'the process left in the namespace is killed',
    });
  }, 60_000);

  it('gives concurrent networks their own subnet; close() is idempotent', async () => {
    const [one, two] = await Promise.all([createNetwork(), createNetwork()]);
    opened.push(one!, two!);
    expect(one!.subnet).not.toBe(two!.subnet);
    const host = await one!.addHost('x');
    expect(namespaces()).toContain(host.netns);
    await one!.close();
    await one!.close();
    expect(namespaces()).not.toContain(host.netns);
    expect(bridgeExists(one!.subnet)).toBe(false);
    expect(bridgeExists(two!.subnet)).toBe(true);
  }, 30_000);
});

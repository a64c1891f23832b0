/**
 * The nodes of the hop chain as child processes (test/hops/fixtures/hop-node.ts run with
 * `node --import tsx`): start one and wait for `READY <address>`; its stderr (its log) is kept.
 * `killHops()` (afterAll) kills whatever is still alive and waits for the exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/hop-node.ts');
const READY_TIMEOUT_MS = 30_000;

export interface HopProcess {
  readonly role: string;
  readonly address: string;
  /** Everything it logged so far. */
  log(): string;
}

const started = new Set<ChildProcess>();

export async function startHop(role: string, env: Record<string, string> = {}): Promise<HopProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...process.env, HOP_ROLE: role, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const address = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hop ${role} not ready after ${READY_TIMEOUT_MS} ms:\n${log}`));
    }, READY_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /READY (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`hop ${role} exited before READY (code ${code}, signal ${signal}):\n${log}`));
    });
  });
  child.stdout!.resume();
  return { role, address, log: () => log };
}

export async function killHops(): Promise<void> {
  const alive = [...started];
  for (const child of alive) child.kill('SIGKILL');
  await Promise.all(
    alive.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve();
          else child.once('exit', () => resolve());
        }),
    ),
  );
}

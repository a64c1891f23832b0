/** Routed provider processes: start, SIGKILL; every one left is killed by `killAll` (afterAll). */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/routed-provider.ts');
const started = new Set<ChildProcess>();

export interface RoutedProcess {
  readonly name: string;
  readonly address: string;
  kill(): Promise<void>;
}

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startRouted(options: {
  name: string;
  service: string;
  registry: string;
  zone: string;
  tags: Record<string, string>;
}): Promise<RoutedProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: {
      ...process.env,
      ROUTED_NAME: options.name,
      ROUTED_SERVICE: options.service,
      ROUTED_REGISTRY: options.registry,
      ROUTED_ZONE: options.zone,
      ROUTED_TAGS: JSON.stringify(options.tags),
    },
    // stdin stays open while this process lives: the provider exits when it closes
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const address = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.name} not ready after 30 s:\n${stderr}`));
    }, 30_000);
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
      reject(new Error(`${options.name} exited before READY (${code ?? signal}):\n${stderr}`));
    });
  });
  child.stdout!.resume();
  return {
    name: options.name,
    address,
    async kill() {
      const exit = exitOf(child);
      child.kill('SIGKILL');
      await exit;
    },
  };
}

export async function killAll(): Promise<void> {
  const alive = [...started];
  for (const child of alive) child.kill('SIGKILL');
  await Promise.all(alive.map(exitOf));
}

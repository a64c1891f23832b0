/**
 * Provider child processes for the chaos suite (test/chaos/fixtures/provider.ts run with
 * `node --import tsx`): start one and wait for `READY <address>`, stop it gracefully, kill it, freeze
 * it. Every process started here is remembered; `killProviders()` (afterEach) SIGCONTs and SIGKILLs
 * whatever is still alive, so no test leaves a process behind, whatever happened.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/provider.ts');
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;

export interface ProviderProcessOptions {
  name: string;
  /** Registry address; omitted: the provider registers nowhere. */
  registry?: string;
  ttlMs?: number;
  heartbeatMs?: number;
  /** Time each call takes, ms. */
  delayMs?: number;
  /** File receiving one line per executed call. */
  execLog?: string;
}

export interface ProviderProcess {
  readonly name: string;
  readonly pid: number;
  /** `host:port` it serves on. */
  readonly address: string;
  readonly exited: boolean;
  /** What it wrote to stderr (warnings), for failure messages. */
  stderr(): string;
  /** SIGTERM (graceful close) and wait for the exit; SIGKILL if it takes longer than 15 s. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** SIGSTOP: the process stops answering; its sockets stay open. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
}

const started = new Set<ChildProcess>();

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

export async function startProvider(options: ProviderProcessOptions): Promise<ProviderProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHAOS_NAME: options.name,
    CHAOS_REGISTRY: options.registry ?? '',
    CHAOS_TTL_MS: String(options.ttlMs ?? 3_000),
    CHAOS_HEARTBEAT_MS: String(options.heartbeatMs ?? 30_000),
    CHAOS_DELAY_MS: String(options.delayMs ?? 0),
    CHAOS_EXEC_LOG: options.execLog ?? '',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  });
  const address = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.name} not ready after ${READY_TIMEOUT_MS} ms:\n${stderr}`));
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
      reject(new Error(`${options.name} exited before READY (code ${code}, signal ${signal}):\n${stderr}`));
    });
  });
  child.stdout!.resume();
  return {
    name: options.name,
    pid: child.pid!,
    address,
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    stderr: () => stderr,
    async stop() {
      const exit = exitOf(child);
      child.kill('SIGTERM');
      const escalate = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const result = await exit;
      clearTimeout(escalate);
      return result;
    },
    async kill() {
      const exit = exitOf(child);
      child.kill('SIGKILL');
      await exit;
    },
    freeze() {
      child.kill('SIGSTOP');
    },
    thaw() {
      child.kill('SIGCONT');
    },
  };
}

/** Kills every provider process still alive (thawing frozen ones first) and waits for their exit. */
export async function killProviders(): Promise<void> {
  const alive = [...started];
  for (const child of alive) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await Promise.all(alive.map(exitOf));
}

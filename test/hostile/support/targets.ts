/**
 * The processes under attack: a provider (fixtures/provider-target.ts) or a consumer
 * (fixtures/consumer-target.ts) in a child process, driven by one-line commands on stdin and answering
 * with prefixed lines on stdout. Memory is reported by the child itself (`process.memoryUsage()` and
 * /proc's VmHWM, the peak since the last reset). Every child started here is killed by `killTargets()`
 * (afterEach), whatever happened.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { AppOptions } from '../../../src/index.js';
import type { MemoryReport } from '../fixtures/memory.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const READY_TIMEOUT_MS = 20_000;
const REPLY_TIMEOUT_MS = 20_000;

export interface Target {
  readonly pid: number;
  /** `host:port` of a provider target; '' for a consumer. */
  readonly address: string;
  readonly exited: boolean;
  /** Sends `command` and resolves with the rest of the first line starting with `reply`. */
  ask(command: string, reply: string): Promise<string>;
  /** Sends a command that has no answer. */
  tell(command: string): void;
  /** Memory after a GC. */
  memory(): Promise<MemoryReport>;
  /** Memory now, with VmHWM the peak since the last `resetPeak()`. */
  peak(): Promise<MemoryReport>;
  /** GC, then resets VmHWM to the current RSS; resolves with the memory then. */
  resetPeak(): Promise<MemoryReport>;
  /** Every `LOG <level> <message>` line it wrote so far. */
  logs(): string[];
}

const started = new Set<ChildProcess>();

function startTarget(script: string, env: Record<string, string>): Promise<Target> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(FIXTURES, script)], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  const logs: string[] = [];
  let stderr = '';
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (line.startsWith('LOG ')) logs.push(line.slice(4));
    else stderr = (stderr + line + '\n').slice(-4_000);
  });
  const waiters: Array<{ prefix: string; resolve: (rest: string) => void }> = [];
  let ready: ((address: string) => void) | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('READY')) {
      ready?.(line.slice(6).trim());
      return;
    }
    const index = waiters.findIndex((w) => line.startsWith(`${w.prefix} `) || line === w.prefix);
    if (index >= 0) waiters.splice(index, 1)[0]!.resolve(line);
  });
  child.stdin!.on('error', () => {});

  const ask = (command: string, reply: string): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`${script}: no "${reply}" answer to "${command}" in ${REPLY_TIMEOUT_MS} ms\n${stderr}`),
          ),
        REPLY_TIMEOUT_MS,
      );
      waiters.push({
        prefix: reply,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line.slice(reply.length).trim());
        },
      });
      child.stdin!.write(`${command}\n`);
    });
  const report = async (command: string, reply: string): Promise<MemoryReport> =>
    JSON.parse(await ask(command, reply)) as MemoryReport;

  return new Promise<Target>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} not ready after ${READY_TIMEOUT_MS} ms:\n${stderr}`));
    }, READY_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited before READY (code ${code}, signal ${signal}):\n${stderr}`));
    });
    ready = (address) => {
      clearTimeout(timer);
      resolve({
        pid: child.pid!,
        address,
        get exited() {
          return child.exitCode !== null || child.signalCode !== null;
        },
        ask,
        tell: (command) => child.stdin!.write(`${command}\n`),
        memory: () => report('mem', 'MEM'),
        peak: () => report('peak', 'PEAK'),
        resetPeak: () => report('reset', 'RESET'),
        logs: () => [...logs],
      });
    };
  });
}

/** A provider process serving `hostile.Target` with `config` over quiet defaults. */
export function startProviderTarget(config: AppOptions = {}): Promise<Target> {
  return startTarget('provider-target.ts', { TARGET_CONFIG: JSON.stringify(config) });
}

export interface ConsumerTargetOptions {
  config?: AppOptions;
  /** Addresses of hostile (fake) providers: one reference each. */
  hostile: string[];
  /** Address of a well-behaved provider. */
  good?: string;
  /** Serializer of the calls to the hostile providers. Default msgpack. */
  serializer?: string;
  /** Timeout of the calls to the hostile providers. Default 3000. */
  timeoutMs?: number;
}

/** A consumer process calling hostile providers (and a good one). */
export function startConsumerTarget(options: ConsumerTargetOptions): Promise<Target> {
  return startTarget('consumer-target.ts', {
    TARGET_CONFIG: JSON.stringify(options.config ?? {}),
    HOSTILE_URLS: options.hostile.join(','),
    GOOD_URL: options.good ?? '',
    CALL_SERIALIZER: options.serializer ?? 'msgpack',
    CALL_TIMEOUT_MS: String(options.timeoutMs ?? 3_000),
  });
}

/** Kills every target still running and waits for them to exit. */
export async function killTargets(): Promise<void> {
  const alive = [...started];
  for (const child of alive) child.kill('SIGKILL');
  await Promise.all(
    alive.map((child) =>
      child.exitCode !== null || child.signalCode !== null
        ? undefined
        : new Promise((resolve) => child.once('exit', resolve)),
    ),
  );
}

/** Growth of the peak resident set over `before`, in MiB. */
export function peakGrowthMiB(before: MemoryReport, after: MemoryReport): number {
  return (after.vmHwm - before.rss) / (1024 * 1024);
}

export const MiB = 1024 * 1024;

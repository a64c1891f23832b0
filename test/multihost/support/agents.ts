/**
 * Agents (fixtures/agent.ts) on namespaced hosts: started with `ip netns exec <host> node --import tsx`,
 * driven over the IPC channel, SIGKILLed by `killAgents()` (afterEach) whatever happened. An agent also
 * exits by itself when the test process goes away.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadReport } from '../../chaos/support/load.js';
import type { Host } from './netns.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/agent.ts');
/** How long an agent may take to start (CALLISTO_AGENT_READY_MS: many at once on 2 cores take longer). */
const READY_TIMEOUT_MS = Number(process.env['CALLISTO_AGENT_READY_MS'] || 30_000);
/** How long a request may take (CALLISTO_AGENT_TIMEOUT_MS: the scale scenarios wait minutes). */
const REQUEST_TIMEOUT_MS = Number(process.env['CALLISTO_AGENT_TIMEOUT_MS'] || 60_000);

export interface ProviderInfo {
  address: string;
  records: Array<{ host: string; port: number }>;
}

export interface Observation {
  known: Record<string, string[]>;
  routable: string[];
  picks: Record<string, { count: number; last: number }>;
  registries: Array<{ status: string; lastError?: string }>;
  changes: Array<{ at: number; version: string; added: string[]; removed: string[] }>;
  warnings: Array<{ at: number; message: string }>;
}

export interface Executed {
  v1: { reads: number; writes: number[] };
  v2: { reads: number; writes: number[] };
}

export interface Agent {
  readonly name: string;
  readonly host: Host;
  readonly pid: number;
  readonly exited: boolean;
  request<T>(op: string, args?: Record<string, unknown>): Promise<T>;
  provider(args: Record<string, unknown>): Promise<ProviderInfo>;
  consumer(args: Record<string, unknown>): Promise<{ first: string }>;
  startLoad(args: {
    rate: number;
    mix?: 'read' | 'write' | 'both';
    version?: 'v1' | 'v2';
    name?: string;
  }): Promise<void>;
  loadStatus(name?: string): Promise<{ issued: number; ok: number; failed: number; inFlight: number }>;
  stopLoad(name?: string): Promise<LoadReport>;
  observe(): Promise<Observation>;
  /** What the provider executed; `reset` starts counting again. */
  executed(reset?: boolean): Promise<Executed>;
  /** Asks the agent to close its apps gracefully and exit; SIGKILL after 15 s. */
  close(): Promise<void>;
  stderr(): string;
}

const started = new Set<ChildProcess>();

function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts an agent (`fixture`: another agent script speaking the same protocol) on `host`. */
export async function startAgent(host: Host, name: string, fixture = AGENT): Promise<Agent> {
  const [command, args] = host.command([process.execPath, '--import', 'tsx', fixture]);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`agent ${name} not ready:\n${stderr}`)),
      READY_TIMEOUT_MS,
    );
    pending.set(0, {
      resolve: () => {
        clearTimeout(timer);
        resolve();
      },
      reject,
    });
  });
  child.on('message', (message: { id: number; ok: boolean; value?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.value);
    else waiter.reject(new Error(`agent ${name}: ${message.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`agent ${name} exited (code ${code}, signal ${signal}):\n${stderr}`));
    }
    pending.clear();
  });
  await ready;

  const request = <T>(op: string, requestArgs: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`agent ${name}: ${op} got no answer in ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.send({ id, op, args: requestArgs });
    });

  return {
    name,
    host,
    pid: child.pid!,
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    request,
    provider: (providerArgs) => request<ProviderInfo>('provider', { name, ...providerArgs }),
    consumer: (consumerArgs) => request<{ first: string }>('consumer', { name, ...consumerArgs }),
    async startLoad(loadArgs) {
      await request('load', loadArgs);
    },
    loadStatus: (loadName = 'main') => request('loadStatus', { name: loadName }),
    stopLoad: (loadName = 'main') => request<LoadReport>('loadStop', { name: loadName }),
    observe: () => request<Observation>('observe'),
    executed: (reset = false) => request<Executed>('executed', { reset }),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = exitOf(child);
      const escalate = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await request('close').catch(() => child.kill('SIGKILL'));
      await exited;
      clearTimeout(escalate);
    },
    stderr: () => stderr,
  };
}

/** SIGKILLs every agent still running and waits for their exit. */
export async function killAgents(): Promise<void> {
  const alive = [...started];
  for (const child of alive) child.kill('SIGKILL');
  await Promise.all(alive.map(exitOf));
}

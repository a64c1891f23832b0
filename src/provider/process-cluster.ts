/**
 * `server.workers: N` (or 'auto' = the machine's cores): the primary process of a provider that spans N
 * processes on one port (node:cluster; the primary accepts and hands connections round robin). The
 * primary serves nothing itself: it picks the port (a free one when `server.port` is 0), starts the
 * workers, waits until each serves, and the provider then registers ONE address for all of them. A
 * worker that dies is replaced (after a delay that grows while replacements keep dying before they
 * serve); `restart()` replaces the workers one at a time, each new one serving before the old one is
 * asked to retire (it stops listening, tells its consumers to reconnect, finishes what it runs, exits),
 * so no call fails; `close()` asks every worker to shut down and waits for them.
 *
 * The workers share the primary's listening socket, so the transport must be one that listens on a
 * `node:net` server: `tcp`, or `tls` (TLS over TCP: each worker terminates TLS itself, with the same
 * `server.tls` certificates, on the connections the primary hands it).
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { ConfigError } from '../core/config-error.js';
import type { Logger } from '../observability/logger.js';
import { PORT_VARIABLE, type PrimaryRequest, WORKER_VARIABLE, type WorkerReport } from './process-worker.js';

/** `server.workers` resolved: how many processes serve (1: this one, no cluster). */
export function workerCount(option: number | 'auto'): number {
  return option === 'auto' ? availableParallelism() : option;
}

/** Transports whose listening socket `node:cluster` shares between processes. */
export const SHARED_TRANSPORTS: readonly string[] = ['tcp', 'tls'];

/** Refuses `server.workers` > 1 over a transport processes cannot share (at `callisto()`, not at start). */
export function checkSharedTransport(workers: number, transport: string): void {
  if (workers > 1 && !SHARED_TRANSPORTS.includes(transport)) {
    throw new ConfigError(
      'server.workers',
      workers,
      `1 with server.transport "${transport}" (only tcp, and tls over it, can be shared by processes)`,
    );
  }
}

export interface ProcessClusterOptions {
  readonly count: number;
  readonly host: string;
  /** 0: the primary picks a free port once, for every worker. */
  readonly port: number;
  /** How long a worker may take to serve after it started (its app's start). */
  readonly startTimeoutMs: number;
  /** How long a worker may take to leave once asked (its graceful shutdown), before it is killed. */
  readonly stopTimeoutMs: number;
  readonly logger: Logger;
}

export interface WorkerInfo {
  /** Its worker number, 1, 2, … (a replacement gets a new one). */
  readonly id: number;
  readonly pid: number | undefined;
  readonly state: 'starting' | 'serving' | 'leaving';
}

export interface ProcessCluster {
  /** Starts the workers; resolves with the port once each serves, rejects if one exits before. */
  start(): Promise<number>;
  /** Replaces every worker, one at a time, without failed calls. */
  restart(): Promise<void>;
  readonly workers: readonly WorkerInfo[];
  /** Workers started to replace one that died. */
  readonly replaced: number;
  /** Asks every worker to shut down gracefully and waits (killing one after stopTimeoutMs). */
  close(): Promise<void>;
  /** Kills the workers now. */
  destroy(): void;
}

interface Member {
  readonly id: number;
  readonly worker: Worker;
  state: 'starting' | 'serving' | 'leaving';
  readonly exited: Promise<number | null>;
}

/** A free port on `host` (bound and released at once). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export function createProcessCluster(options: ProcessClusterOptions): ProcessCluster {
  const { logger } = options;
  const members = new Set<Member>();
  let port = options.port;
  let nextId = 1;
  let replaced = 0;
  let quickDeaths = 0;
  let state: 'created' | 'running' | 'closing' | 'closed' = 'created';
  let replaceTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;

  const ask = (member: Member, request: PrimaryRequest['callisto']): void => {
    member.state = 'leaving';
    if (member.worker.isConnected()) member.worker.send({ callisto: request } satisfies PrimaryRequest);
    else member.worker.process.kill('SIGTERM');
  };

  /** Waits for `member` to leave; kills it after stopTimeoutMs. */
  const awaitExit = async (member: Member): Promise<void> => {
    const timer = setTimeout(() => {
      logger.warn(`worker ${member.id} (pid ${member.worker.process.pid}) did not leave in time: killed`);
      member.worker.process.kill('SIGKILL');
    }, options.stopTimeoutMs);
    await member.exited;
    clearTimeout(timer);
  };

  /** Forks a worker; resolves once it serves, rejects when it exits or times out first. */
  const fork = (): { member: Member; serving: Promise<void> } => {
    const id = nextId++;
    const worker = cluster.fork({ [WORKER_VARIABLE]: String(id), [PORT_VARIABLE]: String(port) });
    const exited = new Promise<number | null>((resolve) =>
      worker.once('exit', (code, signal) => resolve(signal ? null : code)),
    );
    const member: Member = { id, worker, state: 'starting', exited };
    members.add(member);
    const serving = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`worker ${id} did not serve within ${options.startTimeoutMs} ms`));
        worker.process.kill('SIGKILL');
      }, options.startTimeoutMs);
      worker.on('message', (message: Partial<WorkerReport>) => {
        if (message?.callisto !== 'ready') return;
        clearTimeout(timer);
        if (member.state === 'starting') member.state = 'serving';
        resolve();
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`worker ${id} exited (code ${code}) before it served`));
      });
    });
    serving.catch(() => {});
    void exited.then((code) => {
      members.delete(member);
      if (member.state === 'leaving' || state !== 'running') return;
      logger.error(`worker ${id} (pid ${worker.process.pid}) died (code ${code}); starting another`);
      scheduleReplacement(member.state === 'starting');
    });
    return { member, serving };
  };

  const scheduleReplacement = (beforeServing: boolean): void => {
    quickDeaths = beforeServing ? quickDeaths + 1 : 0;
    const delay = Math.min(30_000, quickDeaths === 0 ? 0 : 500 * 2 ** Math.min(quickDeaths, 6));
    const timer = setTimeout(() => {
      if (state !== 'running') return;
      replaced++;
      const { serving } = fork();
      serving.then(
        () => {
          quickDeaths = 0;
        },
        () => {},
      );
    }, delay);
    timer.unref();
    replaceTimer = timer;
  };

  return {
    async start() {
      if (port === 0) port = await freePort(options.host);
      state = 'running';
      const forks = Array.from({ length: options.count }, fork);
      try {
        await Promise.all(forks.map((entry) => entry.serving));
      } catch (error) {
        state = 'closed';
        for (const { member } of forks) member.worker.process.kill('SIGKILL');
        throw error;
      }
      return port;
    },
    restart() {
      if (state !== 'running') return Promise.reject(new Error('the workers are not running'));
      // one rolling restart at a time: asking again while one runs joins it
      restarting ??= (async () => {
        try {
          for (const old of [...members]) {
            if (old.state === 'leaving' || !members.has(old)) continue;
            const { serving } = fork();
            await serving;
            if (state !== 'running') return;
            ask(old, 'retire');
            await awaitExit(old);
          }
        } finally {
          restarting = undefined;
        }
      })();
      return restarting;
    },
    get workers() {
      return [...members].map((member) => ({
        id: member.id,
        pid: member.worker.process.pid,
        state: member.state,
      }));
    },
    get replaced() {
      return replaced;
    },
    async close() {
      if (state === 'closed') return;
      state = 'closing';
      if (replaceTimer !== undefined) clearTimeout(replaceTimer);
      const leaving = [...members];
      for (const member of leaving) ask(member, 'shutdown');
      await Promise.all(leaving.map(awaitExit));
      state = 'closed';
    },
    destroy() {
      state = 'closed';
      if (replaceTimer !== undefined) clearTimeout(replaceTimer);
      for (const member of members) member.worker.process.kill('SIGKILL');
    },
  };
}

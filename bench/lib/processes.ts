/**
 * Child processes for the harness: a system's server and client, each a `node --import tsx` process,
 * optionally pinned to one CPU with `taskset`. Every child is killed when the harness exits.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MEASURE_START_LINE, type UnsupportedResult } from './client-main.js';
import type { ScenarioResult } from './driver.js';

const children = new Set<ChildProcess>();
let cleanupInstalled = false;

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      for (const child of children) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

/** CPU pinning: the server on CPU 0, the client on CPU 1, when possible and not disabled. */
export interface Pinning {
  server: string[];
  client: string[];
  /** Why pinning is off, when it is. */
  note?: string;
}

export function choosePinning(disabled: boolean): Pinning {
  if (disabled) return { server: [], client: [], note: 'disabled by BENCH_PIN=0' };
  if (availableParallelism() < 2) return { server: [], client: [], note: 'fewer than 2 CPUs' };
  const probe = spawnSync('taskset', ['-c', '0', process.execPath, '-e', '0'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    return { server: [], client: [], note: 'taskset not available' };
  }
  return { server: ['taskset', '-c', '0'], client: ['taskset', '-c', '1'] };
}

const tsxLoader = import.meta.resolve('tsx');

/** Spawns `node --import tsx <script> <args>` behind `prefix` (taskset); killed when the harness exits. */
export function spawnScript(prefix: string[], script: string, args: string[]): ChildProcess {
  installCleanup();
  // BENCH_PROFILE=<dir>: each child writes a V8 CPU profile there when it exits (for finding hot spots)
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const command = [...prefix, process.execPath, ...profile, '--import', tsxLoader, script, ...args];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Keeps the last `limit` characters a stream wrote, for error reports. */
export function tail(child: ChildProcess, limit = 4000): () => string {
  let text = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    text = (text + chunk).slice(-limit);
  });
  return () => text.trim();
}

/** Calls `onLine` for every stdout line of `child`. */
export function onLines(child: ChildProcess, onLine: (line: string) => void): void {
  let buffered = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      onLine(buffered.slice(0, newline).trim());
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
}

export interface RunningServer {
  port: number;
  /** CPU time (user + system, all threads) the server has used so far, in ms; undefined off Linux. */
  cpuMs(): number | undefined;
  /** Whether the server is still running, and the tail of its stderr: for error reports. */
  diagnostics(): string;
  /** Closes the server's stdin, waits for `RSS <bytes>` and the exit; kills it if it takes too long. */
  stop(): Promise<number | undefined>;
}

/** Starts a server script and waits for its `READY <port>` line. */
export function startServer(script: string, pinning: Pinning, timeoutMs: number): Promise<RunningServer> {
  const child = spawnScript(pinning.server, script, []);
  const stderr = tail(child);
  let rss: number | undefined;
  let exited = false;
  let exitStatus = '';
  // 'close' (not 'exit'): stdout is fully read by then, RSS line included
  const exit = new Promise<void>((resolve) => {
    child.once('close', (code, signal) => {
      exited = true;
      exitStatus = String(signal ?? code);
      resolve();
    });
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not print READY within ${timeoutMs} ms\n${stderr()}`));
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${signal ?? code}) before READY\n${stderr()}`));
    });
    onLines(child, (line) => {
      const ready = /^READY (\d+)$/.exec(line);
      const peak = /^RSS (\d+)$/.exec(line);
      if (peak) rss = Number(peak[1]);
      if (!ready) return;
      clearTimeout(timer);
      resolve({
        port: Number(ready[1]),
        cpuMs: () => (child.pid === undefined ? undefined : processCpuMs(child.pid)),
        diagnostics: () =>
          `server ${exited ? `exited (${exitStatus})` : `running (pid ${child.pid})`}` +
          (stderr() === '' ? '' : `; server stderr:\n${stderr()}`),
        async stop() {
          if (!exited) {
            child.stdin?.end();
            const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exit;
            clearTimeout(killer);
          }
          return rss;
        },
      });
    });
  });
}

/** Fields 3… of /proc/<pid>/stat (state first), or undefined. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time of a process and its descendants (a server of several processes, `server.workers`) from
 * /proc/<pid>/stat (utime + stime, in clock ticks of 10 ms).
 */
function processCpuMs(pid: number): number | undefined {
  const own = statFields(pid);
  if (own === undefined) return undefined;
  // fields[0] is field 3 (state); ppid is field 4; utime and stime are fields 14 and 15
  const cpu = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) * 10;
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields === undefined) continue;
    const ppid = Number(fields[1]);
    const list = parents.get(ppid) ?? [];
    list.push(Number(entry));
    parents.set(ppid, list);
  }
  let total = cpu(own);
  const pending = [...(parents.get(pid) ?? [])];
  while (pending.length > 0) {
    const child = pending.pop()!;
    const fields = statFields(child);
    if (fields !== undefined) total += cpu(fields);
    pending.push(...(parents.get(child) ?? []));
  }
  return total;
}

/**
 * Runs a client script to completion and parses its JSON result line (or its `{unsupported}` line:
 * a system without streams asked for a stream scenario); `onMeasureStart` is called when the client
 * prints `MEASURE`.
 */
export function runClientOutcome(
  script: string,
  args: string[],
  pinning: Pinning,
  timeoutMs: number,
  onMeasureStart: () => void = () => {},
): Promise<ScenarioResult | UnsupportedResult> {
  const child = spawnScript(pinning.client, script, args);
  child.stdin?.end();
  const stderr = tail(child);
  let result: ScenarioResult | UnsupportedResult | undefined;
  onLines(child, (line) => {
    if (line === MEASURE_START_LINE) onMeasureStart();
    else if (line.startsWith('{')) {
      try {
        result = JSON.parse(line) as ScenarioResult | UnsupportedResult;
      } catch {
        // not the result line
      }
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`client did not finish within ${timeoutMs} ms\n${stderr()}`));
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && result !== undefined) resolve(result);
      else reject(new Error(`client exited (${signal ?? code}) without a result\n${stderr()}`));
    });
  });
}

/** {@link runClientOutcome} for a scenario the client must support: an `{unsupported}` line is an error. */
export async function runClient(
  script: string,
  args: string[],
  pinning: Pinning,
  timeoutMs: number,
  onMeasureStart: () => void = () => {},
): Promise<ScenarioResult> {
  const result = await runClientOutcome(script, args, pinning, timeoutMs, onMeasureStart);
  if ('unsupported' in result) throw new Error(`client cannot run ${args[0]}: ${result.unsupported}`);
  return result;
}

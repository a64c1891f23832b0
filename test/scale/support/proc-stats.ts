/** CPU time and resident memory of a process, read from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticks: number | undefined;

function clockTicks(): number {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticks;
}

/** User + system CPU time of `pid` (all its threads), ms; undefined when it is gone. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
  } catch {
    return undefined;
  }
}

/** Resident set size of `pid`, bytes; undefined when it is gone. */
export function rssBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

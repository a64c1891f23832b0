/** Resident set size of a process (Linux /proc), in MiB. */
import { readFileSync } from 'node:fs';

export function rssMiB(pid: number = process.pid): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Math.round(Number(match[1]) / 1024);
}

/**
 * `npm run bench:profile-summary -- <dir or .cpuprofile files>`: where the time went, from the V8 CPU
 * profiles a `BENCH_PROFILE=<dir>` run wrote (one per server and client process). For each profile,
 * the functions with the most self time (time spent in the function itself, not in what it called),
 * with their share of the samples, file and line; and the same grouped by file, so a hot module shows
 * even when its time is spread over many small functions. `(garbage collector)` and `(program)` rows
 * are V8's own: collection and time outside JavaScript.
 *
 * Options: `--top N` (rows per table, default 25).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

interface Row {
  name: string;
  where: string;
  selfUs: number;
}

/** Self time per node id: the time deltas attributed to the sample that follows each. */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const times = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // V8 records the delta before each sample; the next one is how long this sample's stack ran
    const us = deltas[i + 1] ?? 0;
    times.set(samples[i]!, (times.get(samples[i]!) ?? 0) + us);
  }
  return times;
}

function shortUrl(url: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + 1);
  return relative(process.cwd(), path);
}

function rowsOf(profile: CpuProfile): Row[] {
  const times = selfTimes(profile);
  const rows = new Map<string, Row>();
  for (const node of profile.nodes) {
    const us = times.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : `${shortUrl(url)}:${lineNumber + 1}`;
    const name = functionName === '' ? '(anonymous)' : functionName;
    const key = `${name} ${where}`;
    const row = rows.get(key) ?? { name, where, selfUs: 0 };
    row.selfUs += us;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.selfUs - a.selfUs);
}

function byFile(rows: Row[]): Row[] {
  const files = new Map<string, Row>();
  for (const row of rows) {
    const file = row.where === '' ? row.name : row.where.replace(/:\d+$/, '');
    const entry = files.get(file) ?? { name: file, where: '', selfUs: 0 };
    entry.selfUs += row.selfUs;
    files.set(file, entry);
  }
  return [...files.values()].sort((a, b) => b.selfUs - a.selfUs);
}

function table(title: string, rows: Row[], totalUs: number, top: number): string {
  const lines = [title];
  for (const row of rows.slice(0, top)) {
    const share = ((100 * row.selfUs) / totalUs).toFixed(1).padStart(5);
    const ms = (row.selfUs / 1000).toFixed(0).padStart(7);
    lines.push(`  ${share} % ${ms} ms  ${row.name}${row.where === '' ? '' : `  ${row.where}`}`);
  }
  return lines.join('\n');
}

function profilesIn(paths: string[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        if (name.endsWith('.cpuprofile')) found.push(join(path, name));
      }
    } else found.push(path);
  }
  return found;
}

function main(argv: string[]): void {
  let top = 25;
  const paths: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--top') top = Number(argv[++i]);
    else paths.push(argv[i]!);
  }
  if (paths.length === 0 || !Number.isInteger(top) || top < 1) {
    process.stderr.write('usage: npm run bench:profile-summary -- [--top N] <dir | file.cpuprofile>...\n');
    process.exit(2);
  }
  const files = profilesIn(paths);
  if (files.length === 0) {
    process.stderr.write(`no .cpuprofile files in ${paths.join(', ')}\n`);
    process.exit(1);
  }
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const rows = rowsOf(profile);
    const totalUs = rows.reduce((sum, row) => sum + row.selfUs, 0) || 1;
    const wallMs = ((profile.endTime - profile.startTime) / 1000).toFixed(0);
    process.stdout.write(`\n== ${basename(file)}: ${wallMs} ms profiled\n`);
    process.stdout.write(`${table('self time by function', rows, totalUs, top)}\n`);
    process.stdout.write(`${table('self time by file', byFile(rows), totalUs, Math.min(top, 15))}\n`);
  }
}

main(process.argv.slice(2));

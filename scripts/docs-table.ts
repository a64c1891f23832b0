/**
 * The one mechanism behind the generated tables of docs/ (scripts/config-docs.ts, scripts/filter-docs.ts):
 * a table is the block of lines that starts with its header line and runs while lines start with `|`;
 * a generator replaces that block, or with `--check` exits 1 when the page is stale.
 */
import fs from 'node:fs';

/** `docs` with the table starting at the line `header` replaced by `table`; `page` names docs in the error. */
export function replaceTable(docs: string, init: { header: string; table: string; page: string }): string {
  const lines = docs.split('\n');
  const start = lines.findIndex((line) => line.startsWith(init.header));
  if (start === -1) throw new Error(`${init.page} has no "${init.header}" table`);
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return [...lines.slice(0, start), init.table, ...lines.slice(end)].join('\n');
}

export interface TableFile {
  /** The page's path on disk. */
  readonly file: string;
  /** The page as messages name it (`docs/filters.md`). */
  readonly page: string;
  /** What the table is, in the message after a rewrite (`filter table`). */
  readonly what: string;
  /** The command that regenerates it, in the message when stale. */
  readonly command: string;
  /** The page with its table replaced. */
  readonly update: (docs: string) => string;
}

/** Rewrites the page's table, or with `--check` in `argv` exits 1 when it is stale. */
export function writeOrCheckTable(target: TableFile, argv: readonly string[] = process.argv): void {
  const docs = fs.readFileSync(target.file, 'utf8');
  const updated = target.update(docs);
  if (updated === docs) return;
  if (argv.includes('--check')) {
    console.error(`${target.page} is stale: run ${target.command}`);
    process.exit(1);
  }
  fs.writeFileSync(target.file, updated);
  console.log(`${target.page}: ${target.what} rewritten`);
}

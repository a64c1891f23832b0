/**
 * Writes the table of Callisto's own filters in docs/filters.md from the order table
 * (src/core/filter-order.ts): position, order, name, when it is in the chain, its form and what it
 * does, each position's filters in running order. `npm run docs:filters` rewrites the table; `--check`
 * exits 1 when it is stale (test/core/filter-docs.test.ts runs the same comparison).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { orderFilters } from '../src/core/filter.js';
import { FILTER_POSITIONS, FILTER_TABLE, type FilterOrderEntry } from '../src/core/filter-order.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FILTER_DOCS = path.join(root, 'docs/filters.md');
const HEADER = '| position | order | name | in the chain | form | what it does |';

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The markdown table of every filter of the order table, by position, in running order. */
export function renderFilterTable(table = FILTER_TABLE): string {
  const rows = [HEADER, '|---|---|---|---|---|---|'];
  for (const position of FILTER_POSITIONS) {
    const entries = Object.entries(table[position] as Record<string, FilterOrderEntry>).map(
      ([name, entry]) => ({ name, ...entry }),
    );
    for (const { name, order, when, form, does } of orderFilters(entries)) {
      const shown = name === 'user' ? '*yours*' : `\`${name}\``;
      rows.push(`| ${position} | ${order} | ${shown} | ${cell(when)} | ${form} | ${cell(does)} |`);
    }
  }
  return rows.join('\n');
}

/** `docs` with its filter table (the block of lines starting with the table's header) replaced. */
export function withFilterTable(docs: string, table: string): string {
  const lines = docs.split('\n');
  const start = lines.findIndex((line) => line.startsWith(HEADER));
  if (start === -1) throw new Error(`docs/filters.md has no "${HEADER}" table`);
  let end = start;
  while (end < lines.length && lines[end]!.startsWith('|')) end++;
  return [...lines.slice(0, start), table, ...lines.slice(end)].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const docs = fs.readFileSync(FILTER_DOCS, 'utf8');
  const updated = withFilterTable(docs, renderFilterTable());
  if (process.argv.includes('--check')) {
    if (updated !== docs) {
      console.error('docs/filters.md is stale: run npm run docs:filters');
      process.exit(1);
    }
  } else if (updated !== docs) {
    fs.writeFileSync(FILTER_DOCS, updated);
    console.log('docs/filters.md: filter table rewritten');
  }
}

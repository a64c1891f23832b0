/**
 * Writes the table of Callisto's own filters in docs/filters.md from the order table
 * (src/core/filter-order.ts): position, order, name, when it is in the chain, its form and what it
 * does, each position's filters in running order. `npm run docs:filters` rewrites the table; `--check`
 * exits 1 when it is stale (test/core/filter-docs.test.ts runs the same comparison).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { orderFilters } from '../src/core/filter.js';
import { FILTER_POSITIONS, FILTER_TABLE, type FilterOrderEntry } from '../src/core/filter-order.js';
import { replaceTable, writeOrCheckTable } from './docs-table.js';

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
  return replaceTable(docs, { header: HEADER, table, page: 'docs/filters.md' });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeOrCheckTable({
    file: FILTER_DOCS,
    page: 'docs/filters.md',
    what: 'filter table',
    command: 'npm run docs:filters',
    update: (docs) => withFilterTable(docs, renderFilterTable()),
  });
}

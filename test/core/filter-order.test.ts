/**
 * The order table (src/core/filter-order.ts) is the one place an order number is written in `src/`:
 * every built-in filter's `order:` line names an entry of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../src');
const TABLE = path.join(src, 'core/filter-order.ts');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('the filter order table', () => {
  it('is the only file of src/ that writes an order number', () => {
    const written = sourceFiles(src)
      .filter((file) => file !== TABLE)
      .flatMap((file) =>
        fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${path.relative(src, file)}:${i + 1}`, line }))
          .filter(({ line }) => /\border\s*[:=]\s*-?\d/.test(line) || /_ORDER\s*=\s*-?\d/.test(line)),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(written).toEqual([]);
  });
});

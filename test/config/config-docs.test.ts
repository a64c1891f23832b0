/**
 * docs/configuration.md's key table is generated from src/app/config/callisto-config.ts
 * (`npx tsx scripts/config-docs.ts`): it must list every key, with the default and doc comment the
 * source has today.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS, renderKeyTable, withKeyTable } from '../../scripts/config-docs.js';
import { DEFAULT_CONFIG } from '../../src/index.js';

function leafKeys(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, child]) =>
    typeof child === 'object' && child !== null && !Array.isArray(child) && key !== 'tags'
      ? leafKeys(child as Record<string, unknown>, `${prefix}${key}.`)
      : [prefix + key],
  );
}

describe('docs/configuration.md', () => {
  it('has a row for every key of DEFAULT_CONFIG, each documented in the schema', () => {
    const table = renderKeyTable();
    for (const key of leafKeys(DEFAULT_CONFIG as unknown as Record<string, unknown>)) {
      expect(table, `${key} has no doc comment in callisto-config.ts`).toContain(`| \`${key}\` |`);
    }
  });

  it('shows the table generated from callisto-config.ts (run npx tsx scripts/config-docs.ts)', () => {
    const docs = fs.readFileSync(CONFIG_DOCS, 'utf8');
    expect(withKeyTable(docs, renderKeyTable())).toBe(docs);
  });
});

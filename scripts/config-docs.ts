/**
 * Writes the "Every key" table of docs/configuration.md from the schemas that declare the keys: each
 * part's (the server's, the consumer's, the connections') and the app's own, which composes them in
 * src/app/config/callisto-config.ts. The keys and their doc comments come from the schema objects' source,
 * the defaults from DEFAULT_CONFIG, the variable names from the loader. `npx tsx scripts/config-docs.ts`
 * rewrites the table; `--check` exits 1 when it is stale (test/config/config-docs.test.ts runs the same
 * comparison).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG } from '../src/app/config/callisto-config.js';
import { configEnvName } from '../src/app/config/load-config.js';
import { replaceTable, writeOrCheckTable } from './docs-table.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_SOURCE = path.join(root, 'src/app/config/callisto-config.ts');
/** The app's schema, which composes the others. */
const ROOT_SCHEMA = 'callistoConfigSchema';
/** Where the keys are declared: each part's schema, and the app's (which composes them), last. */
export const SCHEMA_SOURCES = [
  'src/http/http-options.ts',
  'src/provider/grpc/grpc-options.ts',
  'src/transport/tls-options.ts',
  'src/security/auth-options.ts',
  'src/provider/server-options.ts',
  'src/consumer/consumer-options.ts',
  'src/protocol/connection-options.ts',
  'src/observability/observability-options.ts',
  'src/admin/admin-options.ts',
  'src/app/config/callisto-config.ts',
].map((file) => path.join(root, file));
export const CONFIG_DOCS = path.join(root, 'docs/configuration.md');

interface KeyDoc {
  key: string;
  comment: string;
}

/**
 * The `/** … *\/ key:` pairs of each `export const xxx = z.strictObject({ … })` block, in file order; a
 * `...otherSchema.shape,` line stands for the keys of that block, in place.
 */
function schemaBlocks(source: string): Map<string, KeyDoc[]> {
  const blocks = new Map<string, KeyDoc[]>();
  const blockPattern = /^export const (\w+) = z\.strictObject\(\{\n([\s\S]*?)^\}\);/gm;
  for (const block of source.matchAll(blockPattern)) {
    const entries: KeyDoc[] = [];
    const entryPattern = /^ {2}\/\*\*([\s\S]*?)\*\/\n {2}(\w+):|^ {2}\.\.\.(\w+)\.shape,/gm;
    for (const entry of block[2]!.matchAll(entryPattern)) {
      if (entry[3] !== undefined) {
        entries.push(...(blocks.get(entry[3]) ?? []));
        continue;
      }
      const comment = entry[1]!
        .split('\n')
        .map((line) => line.replace(/^\s*\*?\s?/, '').trim())
        .filter(Boolean)
        .join(' ');
      entries.push({ key: entry[2]!, comment });
    }
    blocks.set(block[1]!, entries);
  }
  return blocks;
}

/**
 * Sections: `server: serverConfigSchema` in the root schema makes serverConfigSchema the section
 * `server`; `tls: serverTlsConfigSchema` inside serverConfigSchema makes it `server.tls`. Maps each
 * section's schema to its key path, and each schema to the keys in it that are sections.
 */
function sectionsOf(source: string): { paths: Map<string, string[]>; sectionKeys: Map<string, Set<string>> } {
  const parentOf = new Map<string, { parent: string; key: string }>();
  const sectionKeys = new Map<string, Set<string>>();
  const blockPattern = /^export const (\w+) = z\.strictObject\(\{\n([\s\S]*?)^\}\);/gm;
  for (const block of source.matchAll(blockPattern)) {
    for (const match of block[2]!.matchAll(/^ {2}(\w+): (\w+ConfigSchema),$/gm)) {
      parentOf.set(match[2]!, { parent: block[1]!, key: match[1]! });
      const keys = sectionKeys.get(block[1]!) ?? new Set<string>();
      sectionKeys.set(block[1]!, keys);
      keys.add(match[1]!);
    }
  }
  const pathOf = (schema: string): string[] | undefined => {
    if (schema === ROOT_SCHEMA) return [];
    const up = parentOf.get(schema);
    if (up === undefined) return undefined;
    const parentPath = pathOf(up.parent);
    return parentPath === undefined ? undefined : [...parentPath, up.key];
  };
  const paths = new Map<string, string[]>();
  for (const schema of parentOf.keys()) {
    const found = pathOf(schema);
    if (found !== undefined) paths.set(schema, found);
  }
  return { paths, sectionKeys };
}

function formatDefault(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value)) return value.length === 0 ? '[]' : JSON.stringify(value).replaceAll('"', "'");
  if (typeof value === 'object' && value !== null) {
    return Object.keys(value).length === 0 ? '{}' : JSON.stringify(value).replaceAll('"', "'");
  }
  return String(value);
}

function defaultAt(keyPath: string[]): unknown {
  let value: unknown = DEFAULT_CONFIG;
  for (const key of keyPath) value = (value as Record<string, unknown>)[key];
  return value;
}

/** Splits "Meaning. Default X." into its meaning and the default's text (the last "Default …"). */
function splitComment(comment: string): { meaning: string; defaultText: string | undefined } {
  const starts = [...comment.matchAll(/(?:^|\.\s+)(Default\s)/g)];
  const last = starts[starts.length - 1];
  if (last === undefined) return { meaning: comment, defaultText: undefined };
  const at = last.index + last[0].length - last[1]!.length;
  const meaning = comment.slice(0, at).trim();
  const tail = comment
    .slice(at + 'Default '.length)
    .trim()
    .replace(/\.$/, '');
  // "Default '127.0.0.1'; '0.0.0.0' with …": what follows the semicolon is more meaning.
  const semicolon = tail.indexOf('; ');
  if (semicolon === -1) return { meaning, defaultText: tail };
  return {
    meaning: `${meaning.replace(/\.$/, '')}; ${tail.slice(semicolon + 2)}.`,
    defaultText: tail.slice(0, semicolon),
  };
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/**
 * The blocks to list: each section of the root in file order, its subsections after its own keys
 * (`server.*`, then `server.tls.*`, …), then the root's own keys; a part's block spread into another
 * (the connection keys) is listed there, in place.
 */
function orderedSections(
  blocks: Map<string, KeyDoc[]>,
  paths: Map<string, string[]>,
  sectionKeys: Map<string, Set<string>>,
): string[] {
  const childrenOf = (name: string): string[] =>
    [...blocks.keys()].filter((child) => {
      const childPath = paths.get(child);
      const parentPath = name === ROOT_SCHEMA ? [] : paths.get(name);
      return (
        childPath !== undefined &&
        parentPath !== undefined &&
        childPath.length === parentPath.length + 1 &&
        parentPath.every((key, i) => childPath[i] === key) &&
        (sectionKeys.get(name)?.has(childPath[childPath.length - 1]!) ?? false)
      );
    });
  const out: string[] = [];
  const visit = (name: string) => {
    out.push(name);
    for (const child of childrenOf(name)) visit(child);
  };
  // each section of the root (file order) with its subsections, then the root's own keys
  for (const child of childrenOf(ROOT_SCHEMA)) visit(child);
  out.push(ROOT_SCHEMA);
  return out;
}

/** The markdown table of every key, its default, its variable and its meaning. */
export function renderKeyTable(
  source = SCHEMA_SOURCES.map((file) => fs.readFileSync(file, 'utf8')).join('\n'),
): string {
  const blocks = schemaBlocks(source);
  const { paths, sectionKeys } = sectionsOf(source);
  const rows = ['| key | default | environment | meaning |', '|---|---|---|---|'];
  const ordered = orderedSections(blocks, paths, sectionKeys);
  for (const name of ordered) {
    const entries = blocks.get(name) ?? [];
    const section = name === ROOT_SCHEMA ? [] : paths.get(name)!;
    for (const { key, comment } of entries) {
      if (sectionKeys.get(name)?.has(key)) continue; // a section, listed on its own
      const keyPath = [...section, key];
      const value = defaultAt(keyPath);
      if (value === undefined) throw new Error(`${keyPath.join('.')} has no entry in DEFAULT_CONFIG`);
      const { meaning, defaultText } = splitComment(comment);
      const formatted = formatDefault(value);
      const shown = defaultText?.startsWith(formatted) ? defaultText : formatted;
      rows.push(
        `| \`${keyPath.join('.')}\` | ${cell(shown)} | \`${configEnvName(keyPath)}\` | ${cell(meaning)} |`,
      );
    }
  }
  return rows.join('\n');
}

/** `docs` with its key table (the block of lines starting with `| key |`) replaced by `table`. */
export function withKeyTable(docs: string, table: string): string {
  return replaceTable(docs, {
    header: '| key | default | environment |',
    table,
    page: 'docs/configuration.md',
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeOrCheckTable({
    file: CONFIG_DOCS,
    page: 'docs/configuration.md',
    what: 'key table',
    command: 'npx tsx scripts/config-docs.ts',
    update: (docs) => withKeyTable(docs, renderKeyTable()),
  });
}

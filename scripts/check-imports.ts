/**
 * Checks the shape of `src/` (docs/architecture.md, "Layers"): no import cycles between files, no
 * import from a lower layer into a higher one, and Callisto's own tools (the CLI, the dashboard, the
 * NestJS module and the helpers they share) reach the layers below the entry points through an entry
 * only (`ENTRIES`), never a deep path. Type-only imports count too. `npx tsx scripts/check-imports.ts`
 * prints what it finds and exits 1 on a problem; test/architecture runs it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');

/**
 * The layers, lowest first: a file may import from its own layer and the layers below. A folder's
 * layer applies to its files unless a file is listed on its own.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['core'],
  ['extension', 'serialization', 'observability'],
  ['transport', 'loadbalance', 'service', 'security', 'governance', 'routing'],
  ['protocol', 'registry', 'cluster', 'filters'],
  ['provider', 'consumer', 'http', 'admin'],
  ['app'],
  ['decorators', 'gateway'],
  ['index.ts', 'extend.ts', 'internal.ts', 'testing'],
  ['tools'],
  ['nestjs', 'cli', 'dashboard'],
];

/** The entry points (package.json `exports`): what the folders of `ENTRY_USERS` import Callisto through. */
export const ENTRIES: readonly string[] = [
  'index.ts',
  'extend.ts',
  'internal.ts',
  'registry/index.ts',
  'testing/index.ts',
];

/** Built on the entry points: they import the layers below the entries only through `ENTRIES`. */
export const ENTRY_USERS: readonly string[] = ['tools', 'nestjs', 'cli', 'dashboard'];

const ENTRY_LAYER = LAYERS.findIndex((entries) => entries.includes('index.ts'));

function srcPath(file: string): string {
  return path.relative(srcDir, file).split(path.sep).join('/');
}

/** `file` is in one of `ENTRY_USERS` and imports `target`, below the entries, not through an entry. */
function isDeep(file: string, target: string): boolean {
  const from = srcPath(file);
  if (!ENTRY_USERS.some((folder) => from.startsWith(`${folder}/`))) return false;
  return layerOf(target) < ENTRY_LAYER && !ENTRIES.includes(srcPath(target));
}

function layerOf(file: string): number {
  const relative = srcPath(file);
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((entries, layer) => {
    for (const entry of entries) {
      const matches = entry.endsWith('.ts')
        ? relative === entry
        : relative.startsWith(`${entry}/`) || relative === entry;
      if (matches && entry.length > bestLength) {
        best = layer;
        bestLength = entry.length;
      }
    }
  });
  if (best < 0)
    throw new Error(`src/${relative} is in no layer: add its folder to LAYERS in scripts/check-imports.ts`);
  return best;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]/g;

/** The `src/` files `file` imports (relative specifiers only). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (spec === undefined) continue;
    out.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return out;
}

export interface ImportReport {
  cycles: string[][];
  upward: string[];
  /** Imports of the CLI, dashboard, NestJS module or tools that bypass the entries (`ENTRIES`). */
  deep: string[];
}

export function checkImports(): ImportReport {
  const files = sourceFiles(srcDir);
  const graph = new Map(
    files.map((file) => [file, importsOf(file).filter((target) => fs.existsSync(target))]),
  );
  const rel = (file: string) => path.relative(root, file);
  const upward: string[] = [];
  const deep: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (layerOf(target) > layerOf(file)) upward.push(`${rel(file)} -> ${rel(target)}`);
      else if (isDeep(file, target)) deep.push(`${rel(file)} -> ${rel(target)}`);
    }
  }
  // Tarjan's strongly connected components: every component of more than one file is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(rel(member));
      } while (member !== file);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return { cycles, upward: upward.sort(), deep: deep.sort() };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { cycles, upward, deep } = checkImports();
  for (const cycle of cycles) console.log(`cycle: ${cycle.join(' <-> ')}`);
  for (const line of upward) console.log(`upward: ${line}`);
  for (const line of deep) console.log(`deep: ${line} (import it through src/internal.ts or another entry)`);
  console.log(`${cycles.length} cycles, ${upward.length} upward imports, ${deep.length} deep imports`);
  process.exit(cycles.length + upward.length + deep.length > 0 ? 1 : 0);
}

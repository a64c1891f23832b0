/**
 * The API report: for every entry of the package (package.json `exports`: `callisto`, `callisto/extend`,
 * `callisto/registry`, `callisto/testing`, `callisto/nestjs`, `callisto/internal`), each export's name,
 * kind and type, read by the TypeScript compiler from `src/` (no build needed), written to
 * `api/<entry>.api.md` and committed. test/architecture/api-report.test.ts fails when the report is
 * stale, so that an export added, removed or changed is a reviewed change of that file (and a line in
 * CHANGELOG.md; `callisto/internal` is not semver and needs none).
 *
 *   npm run api:report              # rewrites api/*.api.md
 *   npx tsx scripts/api-report.ts --check   # exits 1, naming the differences, when they are stale
 *
 * What "type" means per kind: a function or a constant, the type the compiler gives it (every overload);
 * an interface, a type alias or an enum, its declaration as written (comments dropped), and for an alias
 * computed from values (`z.infer<typeof schema>`) the type it stands for; a class, its constructors and
 * its public members, static and instance, with their types.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Checker,
  NodeBuilderFlags,
  type Project,
  SignatureKind,
  SymbolFlags,
  type Symbol as TsSymbol,
} from 'typescript/unstable/sync';
import { ROOT, repoPath, SRC, withProject } from './ts-project.js';

export const API_DIR = path.join(ROOT, 'api');
export const UPDATE_COMMAND = 'npm run api:report';

export interface ApiEntry {
  /** `callisto`, `callisto/extend`, … */
  readonly specifier: string;
  /** `src/index.ts`, … */
  readonly source: string;
  /** `api/callisto.api.md`, … */
  readonly report: string;
}

export interface ApiExport {
  readonly name: string;
  /** `function`, `const`, `class`, `interface`, `type`, `enum`, `namespace` (several: `const + type`). */
  readonly kind: string;
  /** The declaration or type text (see the file's comment). */
  readonly type: string;
}

/** The package's entries, from package.json `exports` (each `types` path mapped back to its source). */
export function apiEntries(): ApiEntry[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    if (typeof target === 'string' || target.types === undefined) return [];
    const source = target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');
    const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    return [{ specifier, source, report: `api/${specifier.replace('/', '-')}.api.md` }];
  });
}

const FLAGS = NodeBuilderFlags.NoTruncation;

const KINDS: ReadonlyArray<readonly [SymbolFlags, string]> = [
  [SymbolFlags.Function, 'function'],
  [SymbolFlags.Class, 'class'],
  [SymbolFlags.Variable, 'const'],
  [SymbolFlags.Enum, 'enum'],
  [SymbolFlags.Interface, 'interface'],
  [SymbolFlags.TypeAlias, 'type'],
  [SymbolFlags.ValueModule | SymbolFlags.NamespaceModule, 'namespace'],
];

/**
 * Long one-line types (`{ a: A; b: { c: C; }; }`) broken at braces and semicolons, indented, so that a
 * report diff shows the member that changed. Strings and template literals are left alone.
 */
export function formatType(text: string): string {
  if (text.length <= 100) return text;
  let out = '';
  let depth = 0;
  let quote: string | undefined;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote !== undefined) {
      out += char;
      if (char === '\\') out += text[++i] ?? '';
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === '`') {
      quote = char;
      out += char;
    } else if (char === '{' && text[i + 1] === ' ') {
      depth++;
      out += `{${newline()}`;
      i++;
    } else if (char === ';' && text[i + 1] === ' ') {
      const closing = text[i + 2] === '}';
      if (closing) depth--;
      out += `;${newline()}`;
      i++;
    } else out += char;
  }
  return out;
}

function kindOf(symbol: TsSymbol): string {
  const kinds = KINDS.filter(([flags]) => (symbol.flags & flags) !== 0).map(([, kind]) => kind);
  // a class is a value and a type: `class` says both
  return (
    (kinds.includes('class') ? kinds.filter((kind) => kind !== 'interface') : kinds).join(' + ') || 'other'
  );
}

function typeText(checker: Checker, symbol: TsSymbol): string {
  const type = checker.getTypeOfSymbol(symbol);
  return type === undefined ? '(unknown)' : formatType(checker.typeToString(type, undefined, FLAGS));
}

/** Declared in Callisto's sources (not inherited from `Error` or another type of Node's or a library's). */
function isOurs(member: TsSymbol): boolean {
  return member.declarations.some((handle) => String(handle.path).startsWith(SRC));
}

function memberLines(checker: Checker, members: readonly TsSymbol[], prefix: string): string[] {
  return members
    .filter((member) => isOurs(member) && !member.name.startsWith('__#') && !member.name.startsWith('#'))
    .map((member) => {
      const optional = (member.flags & SymbolFlags.Optional) !== 0 ? '?' : '';
      return `  ${prefix}${member.name}${optional}: ${typeText(checker, member).replaceAll('\n', '\n  ')};`;
    })
    .sort();
}

/** A class: `class X extends Y {`, its constructors, static members, instance members. */
function classText(project: Project, symbol: TsSymbol): string {
  const { checker } = project;
  const statics = checker.getTypeOfSymbol(symbol);
  const instance = checker.getDeclaredTypeOfSymbol(symbol);
  const bases = (instance.getBaseTypes() ?? []).map((base) => checker.typeToString(base, undefined, FLAGS));
  const lines = [`class ${symbol.name}${bases.length > 0 ? ` extends ${bases.join(', ')}` : ''} {`];
  if (statics !== undefined) {
    for (const signature of checker.getSignaturesOfType(statics, SignatureKind.Construct)) {
      const parameters = signature.getParameters().map((parameter) => {
        const optional = (parameter.flags & SymbolFlags.Optional) !== 0 ? '?' : '';
        return `${parameter.name}${optional}: ${typeText(checker, parameter)}`;
      });
      lines.push(`  constructor(${parameters.join(', ')});`);
    }
    lines.push(...memberLines(checker, checker.getPropertiesOfType(statics), 'static '));
  }
  lines.push(...memberLines(checker, checker.getPropertiesOfType(instance), ''), '}');
  return lines.join('\n');
}

/** The declarations of `symbol` in `src/`, as written without comments. */
function declarationText(project: Project, symbol: TsSymbol): string {
  const texts = symbol.declarations.flatMap((handle) => {
    const node = handle.resolve(project);
    if (node === undefined) return [];
    const printed = project.emitter.printNode(node).replace(/^export (declare )?/, '');
    return [printed];
  });
  const text = texts.join('\n');
  // an alias computed from values (a schema's inferred type): the type it stands for, too
  if ((symbol.flags & SymbolFlags.TypeAlias) !== 0 && /\btypeof\b|\binfer\b/.test(text)) {
    const declared = project.checker.getDeclaredTypeOfSymbol(symbol);
    const expanded = project.checker.typeToString(declared, undefined, FLAGS | NodeBuilderFlags.InTypeAlias);
    return `${text}\n// = ${formatType(expanded).replaceAll('\n', '\n// ')}`;
  }
  return text;
}

function exportOf(project: Project, exported: TsSymbol): ApiExport {
  const { checker } = project;
  const symbol = (exported.flags & SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(exported) : exported;
  const kind = kindOf(symbol);
  const parts: string[] = [];
  if ((symbol.flags & SymbolFlags.Class) !== 0) parts.push(classText(project, symbol));
  else {
    if ((symbol.flags & (SymbolFlags.Function | SymbolFlags.Variable)) !== 0)
      parts.push(typeText(checker, symbol));
    if ((symbol.flags & (SymbolFlags.Interface | SymbolFlags.TypeAlias | SymbolFlags.Enum)) !== 0)
      parts.push(declarationText(project, symbol));
  }
  return { name: exported.name, kind, type: parts.join('\n') };
}

/** Every export of every entry, by name, read from `src/`. */
export function readApi(entries: readonly ApiEntry[] = apiEntries()): Map<ApiEntry, ApiExport[]> {
  return withProject((project) => {
    const out = new Map<ApiEntry, ApiExport[]>();
    for (const entry of entries) {
      const file = project.program.getSourceFile(path.join(ROOT, entry.source));
      if (file === undefined)
        throw new Error(`${entry.source} (${entry.specifier}) is not in tsconfig.json's program`);
      const module = project.checker.getSymbolAtLocation(file);
      const exports = module === undefined ? [] : project.checker.getExportsOfModule(module);
      out.set(
        entry,
        exports.map((exported) => exportOf(project, exported)).sort((a, b) => (a.name < b.name ? -1 : 1)),
      );
    }
    return out;
  });
}

const HEADING = /^### `([^`]+)` \(([^)]+)\)$/;

/** The report of one entry, as committed. */
export function renderReport(entry: ApiEntry, exports: readonly ApiExport[]): string {
  const values = exports.filter((item) => /function|const|class|enum|namespace/.test(item.kind)).length;
  const lines = [
    `# \`${entry.specifier}\``,
    '',
    `<!-- Generated by \`${UPDATE_COMMAND}\` (scripts/api-report.ts) from ${entry.source}: do not edit. -->`,
    '',
    `${exports.length} exports: ${values} values, ${exports.length - values} types only.`,
    '',
  ];
  for (const item of exports) {
    lines.push(`### \`${item.name}\` (${item.kind})`, '', '```ts', item.type, '```', '');
  }
  return lines.join('\n');
}

/** The exports of a committed report: name → the text of its section. */
export function parseReport(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let name: string | undefined;
  let body: string[] = [];
  const flush = () => {
    if (name !== undefined) out.set(name, body.join('\n').trim());
  };
  for (const line of text.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      name = heading[1]!;
      body = [line];
    } else if (name !== undefined) body.push(line);
  }
  flush();
  return out;
}

/** What differs between the committed reports and `src/`: one line per export, empty when up to date. */
export function staleReports(api: Map<ApiEntry, ApiExport[]> = readApi()): string[] {
  const problems: string[] = [];
  for (const [entry, exports] of api) {
    const file = path.join(ROOT, entry.report);
    if (!fs.existsSync(file)) {
      problems.push(`${entry.report} is missing (${entry.specifier}, ${exports.length} exports)`);
      continue;
    }
    const committed = parseReport(fs.readFileSync(file, 'utf8'));
    const current = parseReport(renderReport(entry, exports));
    for (const [name, text] of current) {
      const before = committed.get(name);
      if (before === undefined)
        problems.push(`${entry.specifier}: \`${name}\` appeared (not in ${entry.report})`);
      else if (before !== text)
        problems.push(`${entry.specifier}: \`${name}\` changed:\n${diffLines(before, text)}`);
    }
    for (const name of committed.keys()) {
      if (!current.has(name))
        problems.push(`${entry.specifier}: \`${name}\` disappeared (still in ${entry.report})`);
    }
  }
  const known = new Set([...api.keys()].map((entry) => path.basename(entry.report)));
  if (fs.existsSync(API_DIR)) {
    for (const file of fs.readdirSync(API_DIR)) {
      if (file.endsWith('.api.md') && !known.has(file))
        problems.push(`api/${file} is the report of no entry`);
    }
  }
  return problems;
}

/** The lines of `after` not in `before` (+) and the other way round (-), for a message. */
function diffLines(before: string, after: string): string {
  const old = new Set(before.split('\n'));
  const now = new Set(after.split('\n'));
  return [
    ...before
      .split('\n')
      .filter((line) => !now.has(line))
      .map((line) => `    - ${line}`),
    ...after
      .split('\n')
      .filter((line) => !old.has(line))
      .map((line) => `    + ${line}`),
  ].join('\n');
}

/** Rewrites api/*.api.md from `src/`; returns the files written. */
export function writeReports(api: Map<ApiEntry, ApiExport[]> = readApi()): string[] {
  fs.mkdirSync(API_DIR, { recursive: true });
  const known = new Set<string>();
  for (const [entry, exports] of api) {
    fs.writeFileSync(path.join(ROOT, entry.report), renderReport(entry, exports));
    known.add(path.basename(entry.report));
  }
  for (const file of fs.readdirSync(API_DIR)) {
    if (file.endsWith('.api.md') && !known.has(file)) fs.rmSync(path.join(API_DIR, file));
  }
  return [...api.keys()].map((entry) => entry.report);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const api = readApi();
  if (process.argv.includes('--check')) {
    const problems = staleReports(api);
    for (const problem of problems) console.log(problem);
    if (problems.length > 0) console.log(`the API report is stale: run \`${UPDATE_COMMAND}\``);
    process.exit(problems.length > 0 ? 1 : 0);
  }
  for (const report of writeReports(api)) {
    const entry = [...api.keys()].find((candidate) => candidate.report === report)!;
    console.log(
      `${report}: ${api.get(entry)!.length} exports of ${entry.specifier} (${repoPath(path.join(ROOT, entry.source))})`,
    );
  }
}

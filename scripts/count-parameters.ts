/**
 * Counts positional parameters: every function, method, arrow function, constructor, and every function
 * or method signature in a type, in `src/` (the shipped sources, no tests), read by the TypeScript
 * compiler. More than `MAX_POSITIONAL` positional parameters is an init object waiting to happen
 * (docs/architecture.md; a `this` parameter is not counted, a rest parameter and a destructured object
 * count as one each). test/architecture/parameters.test.ts fails on any.
 *
 *   npm run count:parameters          # lists the offenders (file:line, name, count); exits 1 if any
 *   npx tsx scripts/count-parameters.ts --all 4   # every declaration with more than 4
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Node, SourceFile } from 'typescript/unstable/ast';
import { SyntaxKind } from 'typescript/unstable/ast';
import { repoPath, SRC, withProject } from './ts-project.js';

/** At most this many positional parameters anywhere in src/. */
export const MAX_POSITIONAL = 5;

/** What takes parameters. */
const FUNCTION_KINDS: ReadonlyMap<SyntaxKind, string> = new Map([
  [SyntaxKind.FunctionDeclaration, 'function'],
  [SyntaxKind.FunctionExpression, 'function'],
  [SyntaxKind.ArrowFunction, 'arrow function'],
  [SyntaxKind.MethodDeclaration, 'method'],
  [SyntaxKind.Constructor, 'constructor'],
  [SyntaxKind.MethodSignature, 'method signature'],
  [SyntaxKind.CallSignature, 'call signature'],
  [SyntaxKind.ConstructSignature, 'construct signature'],
  [SyntaxKind.FunctionType, 'function type'],
  [SyntaxKind.ConstructorType, 'constructor type'],
]);

export interface ParameterCount {
  /** `src/provider/provider.ts:42` */
  readonly where: string;
  /** `createProvider`, `ServerInvocation.constructor`, `(arrow function in createX)` */
  readonly name: string;
  readonly kind: string;
  readonly count: number;
}

interface Named {
  readonly name?: Node & { readonly text?: string };
  readonly parameters?: readonly (Node & { readonly name: Node & { readonly text?: string } })[];
}

function textOf(node: Node | undefined): string | undefined {
  if (node === undefined) return undefined;
  const text = (node as { text?: unknown }).text;
  return typeof text === 'string' ? text : undefined;
}

/** The name a reader finds the declaration by: its own, or the variable, property or class it is in. */
function nameOf(node: Node): string {
  const own = textOf((node as Named).name);
  const owner = (from: Node): string | undefined => {
    for (let up: Node | undefined = from.parent; up !== undefined; up = up.parent) {
      const name = textOf((up as Named).name);
      if (name !== undefined && up.kind !== SyntaxKind.Parameter) return name;
    }
    return undefined;
  };
  if (node.kind === SyntaxKind.Constructor) return `${owner(node) ?? '(class)'}.constructor`;
  if (own !== undefined) {
    const parent = node.parent;
    const inType =
      parent.kind === SyntaxKind.ClassDeclaration ||
      parent.kind === SyntaxKind.ClassExpression ||
      parent.kind === SyntaxKind.InterfaceDeclaration ||
      parent.kind === SyntaxKind.TypeLiteral ||
      parent.kind === SyntaxKind.ObjectLiteralExpression;
    const container = inType ? owner(node) : undefined;
    return container !== undefined ? `${container}.${own}` : own;
  }
  return owner(node) ?? '(anonymous)';
}

function positional(node: Node): number {
  const parameters = (node as Named).parameters ?? [];
  return parameters.filter((parameter) => textOf(parameter.name) !== 'this').length;
}

export interface CountOptions {
  /** Count above this; default `MAX_POSITIONAL`. */
  readonly max?: number;
  /** The project to read; default the repository's tsconfig.json (src/, no tests). */
  readonly tsconfig?: string;
  /** Only the files under this directory; default src/. */
  readonly under?: string;
}

/** Every declaration in src/ taking more than `max` positional parameters, in file and line order. */
export function countParameters(options: CountOptions = {}): ParameterCount[] {
  const { max = MAX_POSITIONAL, under = SRC } = options;
  return withProject((project) => {
    const out: ParameterCount[] = [];
    const files = project.program
      .getSourceFileNames()
      .filter((file) => file.startsWith(under + path.sep) && !file.endsWith('.d.ts'))
      .sort();
    for (const fileName of files) {
      const file = project.program.getSourceFile(fileName) as SourceFile | undefined;
      if (file === undefined) continue;
      const visit = (node: Node): void => {
        const kind = FUNCTION_KINDS.get(node.kind);
        if (kind !== undefined) {
          const count = positional(node);
          if (count > max) {
            const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
            out.push({ where: `${repoPath(fileName)}:${line + 1}`, name: nameOf(node), kind, count });
          }
        }
        node.forEachChild(visit);
      };
      file.forEachChild(visit);
    }
    return out;
  }, options.tsconfig);
}

/** `src/x.ts:12  createX (function): 7 positional parameters` */
export function describeCount(count: ParameterCount): string {
  return `${count.where}  ${count.name} (${count.kind}): ${count.count} positional parameters`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--all');
  const max = at >= 0 ? Number(process.argv[at + 1] ?? MAX_POSITIONAL) : MAX_POSITIONAL;
  const found = countParameters({ max });
  for (const count of found) console.log(describeCount(count));
  console.log(`${found.length} declarations with more than ${max} positional parameters`);
  process.exit(found.length > 0 && max === MAX_POSITIONAL ? 1 : 0);
}

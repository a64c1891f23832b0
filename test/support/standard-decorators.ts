/**
 * A Vite plugin for the tests: lowers standard (TC39) decorators with esbuild in the given directories.
 * Vite 8 transforms TypeScript with Oxc, which keeps standard decorators as they are, and Node 20 cannot
 * run them; tsc (the typecheck), tsx (the examples) and esbuild all lower them. Only files under the
 * given directories go through esbuild; Oxc still handles every file afterwards (for these, plain
 * JavaScript by then).
 */
import path from 'node:path';
import { transform } from 'esbuild';
import type { Plugin } from 'vite';

export function standardDecorators(directories: readonly string[]): Plugin {
  const roots = directories.map((directory) => path.resolve(directory) + path.sep);
  return {
    name: 'callisto:standard-decorators',
    enforce: 'pre',
    async transform(code, id) {
      const file = id.split('?')[0]!;
      if (!file.endsWith('.ts') || !roots.some((root) => file.startsWith(root))) return null;
      const result = await transform(code, {
        loader: 'ts',
        format: 'esm',
        target: 'es2022',
        sourcemap: true,
        sourcefile: file,
        tsconfigRaw: {
          compilerOptions: {
            experimentalDecorators: false,
            useDefineForClassFields: true,
            verbatimModuleSyntax: true,
          },
        },
      });
      return { code: result.code, map: result.map };
    },
  };
}

/**
 * The TypeScript compiler over `src/` (tsconfig.json: the shipped sources, no tests), for the scripts
 * that read the code's shape (scripts/api-report.ts, scripts/count-parameters.ts). TypeScript 7's
 * compiler API (`typescript/unstable/sync`) runs the native compiler in a child process and answers
 * synchronously; `withProject` opens it, hands over the project and always closes it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API, type Project } from 'typescript/unstable/sync';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SRC = path.join(ROOT, 'src');

/** Runs `use` over the project of `tsconfig` (default the repository's tsconfig.json), then closes the compiler. */
export function withProject<T>(use: (project: Project) => T, tsconfig = path.join(ROOT, 'tsconfig.json')): T {
  const api = new API({ cwd: ROOT });
  try {
    const snapshot = api.updateSnapshot({ openProjects: [tsconfig] });
    const project = snapshot.getProjects()[0];
    if (project === undefined) throw new Error(`the TypeScript compiler opened no project for ${tsconfig}`);
    return use(project);
  } finally {
    api.close();
  }
}

/** `src/…`, with forward slashes, for messages and reports. */
export function repoPath(file: string): string {
  return path.relative(ROOT, file).split(path.sep).join('/');
}

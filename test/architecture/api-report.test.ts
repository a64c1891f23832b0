/**
 * The public API is pinned: api/<entry>.api.md lists every export of every package entry with its kind
 * and type (scripts/api-report.ts, through the TypeScript compiler over src/). An export that appears,
 * disappears or changes type without the report being regenerated fails here, naming it: the change is
 * then a reviewed diff of api/ (and a CHANGELOG.md line, except for `callisto/internal`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiEntry,
  type ApiExport,
  apiEntries,
  readApi,
  staleReports,
  UPDATE_COMMAND,
} from '../../scripts/api-report.js';

/** The compiler runs in a child process: a second or two, more on a loaded machine. */
const COMPILER_TIMEOUT_MS = 60_000;

let api: Map<ApiEntry, ApiExport[]>;
beforeAll(() => {
  api = readApi();
}, COMPILER_TIMEOUT_MS);

describe('the API report (api/*.api.md)', () => {
  it('covers every entry of package.json exports', () => {
    expect(apiEntries().map((entry) => entry.specifier)).toEqual([
      'callisto',
      'callisto/extend',
      'callisto/testing',
      'callisto/registry',
      'callisto/nestjs',
      'callisto/internal',
    ]);
    for (const exports of api.values()) expect(exports.length).toBeGreaterThan(0);
  });

  it('is up to date with src/ (every export, its kind and type)', () => {
    const problems = staleReports(api);
    if (problems.length > 0) {
      throw new Error(
        `the API report is stale:\n${problems.join('\n')}\n\n` +
          `If the change is meant, run \`${UPDATE_COMMAND}\`, review the diff of api/ and add a CHANGELOG.md line ` +
          '(not needed for callisto/internal, which is not semver).',
      );
    }
  });

  it('names an export that appeared, one that disappeared and one whose type changed', () => {
    const [entry, exports] = [...api].find(([candidate]) => candidate.specifier === 'callisto')!;
    const [first, second, ...rest] = exports;
    const changed = new Map(api);
    changed.set(entry, [
      { name: 'brandNewExport', kind: 'function', type: '() => void' },
      { ...second!, type: `${second!.type} | undefined` },
      ...rest,
    ]);
    const problems = staleReports(changed).join('\n');
    expect(problems).toContain('callisto: `brandNewExport` appeared');
    expect(problems).toContain(`callisto: \`${first!.name}\` disappeared`);
    expect(problems).toContain(`callisto: \`${second!.name}\` changed`);
  });
});

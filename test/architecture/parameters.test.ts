/**
 * Init objects, not long positional lists: no function, method, arrow function, constructor or
 * signature in src/ takes more than 5 positional parameters (scripts/count-parameters.ts, through the
 * TypeScript compiler). Each offender is named with its file and line.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  countParameters,
  describeCount,
  MAX_POSITIONAL,
  type ParameterCount,
} from '../../scripts/count-parameters.js';
import { ROOT as REPO } from '../../scripts/ts-project.js';

/** The compiler runs in a child process: a second or two, more on a loaded machine. */
const COMPILER_TIMEOUT_MS = 60_000;

let found: ParameterCount[];
beforeAll(() => {
  found = countParameters();
}, COMPILER_TIMEOUT_MS);

describe('positional parameters in src/', () => {
  it(`has nothing with more than ${MAX_POSITIONAL} (use an init object)`, () => {
    const offenders = found.map(describeCount);
    expect(offenders, `more than ${MAX_POSITIONAL} positional parameters:\n${offenders.join('\n')}`).toEqual(
      [],
    );
  });

  it('counts positional parameters of every kind of declaration, not a `this` parameter', () => {
    const fixture = path.join(REPO, 'test/fixtures/parameters');
    const counted = countParameters({ tsconfig: path.join(fixture, 'tsconfig.json'), under: fixture });
    expect(counted.map((count) => `${count.name} (${count.kind}): ${count.count}`)).toEqual([
      'six (function): 6',
      'arrowSix (arrow function): 6',
      'Holder.constructor (constructor): 6',
      'Holder.seven (method): 7',
      'Shape.method (method signature): 6',
    ]);
    expect(counted[0]!.where).toBe('test/fixtures/parameters/offenders.ts:3');
  });
});

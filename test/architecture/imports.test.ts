/**
 * The shape of src/ (docs/architecture.md, "Layers"): no import cycles between files, no import from a
 * lower layer into a higher one, and the CLI, the dashboard, the NestJS module and tools/ reach Callisto
 * through its entry points only (scripts/check-imports.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkImports } from '../../scripts/check-imports.js';

describe('src/ layers', () => {
  it('has no import cycles and no upward imports', () => {
    const { cycles, upward } = checkImports();
    expect(cycles).toEqual([]);
    expect(upward).toEqual([]);
  });

  it('has the CLI, the dashboard, the NestJS module and tools/ import Callisto through an entry only', () => {
    expect(checkImports().deep).toEqual([]);
  });
});

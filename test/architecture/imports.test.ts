/**
 * The shape of src/ (docs/architecture.md, "Layers"): no import cycles between files, and no import from
 * a lower layer into a higher one (scripts/check-imports.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkImports } from '../../scripts/check-imports.js';

describe('src/ layers', () => {
  it('has no import cycles and no upward imports', () => {
    const { cycles, upward } = checkImports();
    expect(cycles).toEqual([]);
    expect(upward).toEqual([]);
  });
});

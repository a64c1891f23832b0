import { describe, expect, it } from 'vitest';
import { IdTable } from './id-table.js';

/** A small deterministic generator (xorshift32), so a failure replays. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

describe('IdTable', () => {
  it('stores, replaces, finds and removes values by 32-bit id', () => {
    const table = new IdTable<string>();
    table.set(0, 'zero');
    table.set(0xffffffff, 'max');
    table.set(7, 'seven');
    table.set(7, 'seven again');
    expect(table.size).toBe(3);
    expect(table.get(0)).toBe('zero');
    expect(table.get(0xffffffff)).toBe('max');
    expect(table.get(7)).toBe('seven again');
    expect(table.has(8)).toBe(false);
    expect(table.delete(7)).toBe(true);
    expect(table.delete(7)).toBe(false);
    expect(table.get(7)).toBeUndefined();
    expect(table.values().sort()).toEqual(['max', 'zero']);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.get(0)).toBeUndefined();
  });

  it('refuses undefined as a value (it marks an empty slot)', () => {
    expect(() => new IdTable<undefined>().set(1, undefined)).toThrow(/undefined/);
  });

  it('agrees with a Map over a long run of random adds and removes, growing and shrinking', () => {
    const next = random(20261204);
    const table = new IdTable<number>();
    const reference = new Map<number, number>();
    const live: number[] = [];
    let peak = 0;
    for (let step = 0; step < 60_000; step++) {
      // phases: fill to a few thousand, drain to a handful, repeat (the table grows and shrinks)
      const filling = Math.floor(step / 10_000) % 2 === 0;
      const add = live.length === 0 || next() % 100 < (filling ? 70 : 30);
      if (add) {
        // small ids collide in the table's home slots; large ones exercise the full 32 bits
        const id = next() % 4 === 0 ? next() % 64 : next();
        if (!reference.has(id)) live.push(id);
        table.set(id, step);
        reference.set(id, step);
      } else {
        const at = next() % live.length;
        const id = live[at]!;
        live[at] = live[live.length - 1]!;
        live.pop();
        expect(table.delete(id)).toBe(true);
        reference.delete(id);
      }
      peak = Math.max(peak, reference.size);
      if (step % 97 === 0) {
        expect(table.size).toBe(reference.size);
        const probe = next() % 3 === 0 ? live[next() % Math.max(1, live.length)] : next();
        if (probe !== undefined) expect(table.get(probe)).toBe(reference.get(probe));
      }
    }
    expect(peak).toBeGreaterThan(2_000);
    expect(table.size).toBe(reference.size);
    for (const [id, value] of reference) expect(table.get(id)).toBe(value);
    expect(table.values().sort((a, b) => a - b)).toEqual([...reference.values()].sort((a, b) => a - b));
  });

  it('keeps every entry reachable when removals wrap around the end of the table', () => {
    // ids whose home slots are the last ones: their runs wrap to slot 0 and back
    const table = new IdTable<number>();
    const ids: number[] = [];
    for (let id = 0; ids.length < 6; id++) {
      if (Math.imul(id, 0x9e3779b1) >>> 28 >= 14) ids.push(id);
    }
    for (const id of ids) table.set(id, id);
    for (const id of ids.slice(0, 3)) table.delete(id);
    for (const id of ids.slice(3)) expect(table.get(id)).toBe(id);
    expect(table.size).toBe(3);
  });

  it('keeps its slots across bursts that drain to empty, and gives them back once it stays sparse', () => {
    const table = new IdTable<number>();
    let id = 0;
    const burst = (count: number): void => {
      const first = id;
      for (let i = 0; i < count; i++) table.set(id++, i);
      for (let at = first; at < id; at++) table.delete(at);
    };
    burst(300);
    const grown = table.capacity;
    expect(grown).toBeGreaterThanOrEqual(600);
    for (let round = 0; round < 20; round++) {
      burst(300);
      expect(table.capacity).toBe(grown);
    }
    // a steady trickle of one call at a time: the table shrinks step by step to its smallest
    for (let i = 0; i < 50_000; i++) burst(1);
    expect(table.capacity).toBe(16);
    expect(table.size).toBe(0);
  });
});

/**
 * A table of values by 32-bit id (a request id, a stream id), for a connection's calls in flight:
 * open addressing with linear probing and backward-shift deletion, in two arrays that live as long as
 * the table and are only replaced when it grows or shrinks.
 *
 * Why not a `Map`: a connection adds and removes one entry per call, with ids that never repeat. A V8
 * `Map` under that churn keeps rehashing into a new backing table, and each obsolete table keeps its
 * entries and a link to the table that replaced it. Once one of them is in the old generation, every
 * call stored since is reachable through that chain at the next scavenge: measured on the bench
 * provider (S2, 16 calls in flight), 1.9 MB of each scavenge's 11 MB survived and was promoted
 * (6 ms per scavenge, 20 % of the provider's CPU; its old generation grew to 90 MB between full
 * collections). With this table, 150 KB survive and a scavenge takes 1 ms.
 */

/** The smallest table (slots); always a power of two. */
const MIN_CAPACITY = 16;

export class IdTable<V> {
  #keys: Uint32Array;
  #values: (V | undefined)[];
  #mask: number;
  /** 32 − log2(slots): the hash's top bits pick the slot. */
  #shift: number;
  #size = 0;
  /** Removals since the table last held more than an eighth of its slots (see {@link delete}). */
  #sparseRemovals = 0;

  constructor(capacity = MIN_CAPACITY) {
    const slots = powerOfTwoAtLeast(Math.max(MIN_CAPACITY, capacity));
    this.#keys = new Uint32Array(slots);
    this.#values = new Array<V | undefined>(slots).fill(undefined);
    this.#mask = slots - 1;
    this.#shift = 32 - Math.log2(slots);
  }

  get size(): number {
    return this.#size;
  }

  /** Slots (a power of two): at least twice the size. */
  get capacity(): number {
    return this.#values.length;
  }

  get(id: number): V | undefined {
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    const key = id >>> 0;
    for (let slot = slotOf(key, this.#shift); ; slot = (slot + 1) & mask) {
      const value = values[slot];
      if (value === undefined) return undefined;
      if (keys[slot] === key) return value;
    }
  }

  has(id: number): boolean {
    return this.get(id) !== undefined;
  }

  /** Stores `value` (not undefined) as `id`, replacing what was stored as `id`. */
  set(id: number, value: V): void {
    if (value === undefined) throw new TypeError('IdTable cannot hold undefined');
    if ((this.#size + 1) * 2 > this.#values.length) this.#resize(this.#values.length * 2);
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    const key = id >>> 0;
    let slot = slotOf(key, this.#shift);
    while (values[slot] !== undefined) {
      if (keys[slot] === key) {
        values[slot] = value;
        return;
      }
      slot = (slot + 1) & mask;
    }
    keys[slot] = key;
    values[slot] = value;
    this.#size++;
  }

  /** Removes `id`; whether it was there. */
  delete(id: number): boolean {
    const keys = this.#keys;
    const values = this.#values;
    const mask = this.#mask;
    const key = id >>> 0;
    let slot = slotOf(key, this.#shift);
    for (;;) {
      if (values[slot] === undefined) return false;
      if (keys[slot] === key) break;
      slot = (slot + 1) & mask;
    }
    // backward shift: move every later entry of the run that may sit in the hole back into it
    let hole = slot;
    for (let next = (hole + 1) & mask; values[next] !== undefined; next = (next + 1) & mask) {
      const home = slotOf(keys[next]!, this.#shift);
      // the entry at `next` may move to `hole` unless its home lies cyclically in (hole, next]
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      keys[hole] = keys[next]!;
      values[hole] = values[next];
      hole = next;
    }
    values[hole] = undefined;
    this.#size--;
    // Shrink only a table that stayed sparse for many removals: calls come in bursts (a read of 256
    // requests, then their answers), and a table that shrank each time its burst drained would grow
    // again at the next one.
    if (this.#size * 8 >= values.length) this.#sparseRemovals = 0;
    else if (++this.#sparseRemovals > values.length * 4 && values.length > MIN_CAPACITY) {
      this.#resize(values.length / 2);
    }
    return true;
  }

  /** The stored values, in no particular order (a snapshot: the table may change while it is read). */
  values(): V[] {
    const out: V[] = [];
    for (const value of this.#values) if (value !== undefined) out.push(value);
    return out;
  }

  /** The stored entries as [id, value], in no particular order (a snapshot, like {@link values}). */
  entries(): Array<[id: number, value: V]> {
    const out: Array<[number, V]> = [];
    const values = this.#values;
    for (let slot = 0; slot < values.length; slot++) {
      const value = values[slot];
      if (value !== undefined) out.push([this.#keys[slot]!, value]);
    }
    return out;
  }

  clear(): void {
    this.#keys = new Uint32Array(MIN_CAPACITY);
    this.#values = new Array<V | undefined>(MIN_CAPACITY).fill(undefined);
    this.#mask = MIN_CAPACITY - 1;
    this.#shift = 32 - Math.log2(MIN_CAPACITY);
    this.#size = 0;
    this.#sparseRemovals = 0;
  }

  #resize(slots: number): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    this.#keys = new Uint32Array(slots);
    this.#values = new Array<V | undefined>(slots).fill(undefined);
    this.#mask = slots - 1;
    this.#shift = 32 - Math.log2(slots);
    this.#size = 0;
    this.#sparseRemovals = 0;
    for (let slot = 0; slot < oldValues.length; slot++) {
      const value = oldValues[slot];
      if (value !== undefined) this.set(oldKeys[slot]!, value);
    }
    // the old arrays are dropped empty: nothing they held is kept alive through them
    oldValues.fill(undefined);
  }
}

/** Fibonacci hashing: the top bits of id × 2^32/φ spread sequential ids over the table. */
function slotOf(key: number, shift: number): number {
  return Math.imul(key, 0x9e3779b1) >>> shift;
}

function powerOfTwoAtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * A ketama consistent-hash ring as Dubbo builds it: every provider gets virtual nodes in proportion to
 * its weight; each MD5 digest of `address + i` yields four 32-bit points (little-endian words 0..3), so
 * Callisto and Dubbo place the same address on the same points. The ring is two parallel typed arrays
 * sorted by point, searched with a binary search. A call's key is placed with a fast non-cryptographic
 * hash (`ringHash`).
 */
import { hash } from 'node:crypto';

/** One member of a ring, as it was when the ring was built. */
export interface RingMember {
  readonly address: string;
  readonly weight: number;
}

export interface HashRing {
  /** Ring points, ascending. */
  readonly points: Uint32Array;
  /** `owners[k]` is the index (in the member list the ring was built from) owning `points[k]`. */
  readonly owners: Uint32Array;
}

/** The weight that gets exactly `virtualNodes` nodes; others are proportional. */
export const REFERENCE_WEIGHT = 100;

/** Member indexes are packed below the point in one float64 for sorting: 2^21 members at most. */
const OWNER_BITS = 2 ** 21;

/** MD5 of a UTF-8 string. */
export function md5(text: string): Buffer {
  return hash('md5', text, 'buffer');
}

/**
 * The 32-bit ring position of a call's key: MurmurHash3 (x86, 32-bit) over the string's UTF-16 code
 * units, two per block. The ring points are MD5 as in Dubbo, but hashing every call's key with MD5 costs
 * microseconds and allocates a buffer; murmur's avalanche spreads keys just as evenly, allocation-free.
 */
export function ringHash(key: string): number {
  let h = 0x9747b28c;
  const length = key.length;
  const even = length & ~1;
  for (let i = 0; i < even; i += 2) {
    let k = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  if (even !== length) {
    let k = key.charCodeAt(even);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
  }
  h ^= length * 2;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Virtual nodes for a member: `virtualNodes * weight / 100`, rounded, at least 1; none for weight 0.
 * `allZero` (every member has weight 0) gives everyone `virtualNodes`, so the ring is never empty.
 */
export function virtualNodeCount(weight: number, virtualNodes: number, allZero: boolean): number {
  if (allZero) return Math.max(1, Math.round(virtualNodes));
  if (!(weight > 0)) return 0;
  return Math.max(1, Math.round((virtualNodes * weight) / REFERENCE_WEIGHT));
}

/** Builds the ring of `members` (at most 2^21, a non-empty list). */
export function buildHashRing(members: readonly RingMember[], virtualNodes: number): HashRing {
  if (members.length >= OWNER_BITS) throw new RangeError(`hash ring: too many members (${members.length})`);
  let allZero = true;
  for (const m of members) if (m.weight > 0) allZero = false;
  let count = 0;
  for (const m of members) count += virtualNodeCount(m.weight, virtualNodes, allZero);
  const packed = new Float64Array(count);
  let k = 0;
  for (let owner = 0; owner < members.length; owner++) {
    const member = members[owner]!;
    const nodes = virtualNodeCount(member.weight, virtualNodes, allZero);
    for (let i = 0; i * 4 < nodes; i++) {
      const digest = md5(member.address + i);
      for (let h = 0; h < 4 && i * 4 + h < nodes; h++) {
        packed[k++] = digest.readUInt32LE(h * 4) * OWNER_BITS + owner;
      }
    }
  }
  packed.sort();
  const points = new Uint32Array(count);
  const owners = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    const value = packed[i]!;
    const owner = value % OWNER_BITS;
    points[i] = (value - owner) / OWNER_BITS;
    owners[i] = owner;
  }
  return { points, owners };
}

/** The owner of the first point at or after `position`, wrapping to the first point (Dubbo's `ceilingEntry`). */
export function ringLookup(ring: HashRing, position: number): number {
  const points = ring.points;
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (points[mid]! < position) lo = mid + 1;
    else hi = mid;
  }
  return ring.owners[lo === points.length ? 0 : lo]!;
}

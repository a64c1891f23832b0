/**
 * `consistenthash`: calls with the same key (the arguments at `hashArguments`) go to the same provider,
 * and when a provider joins or leaves only about 1/N of the keys move. A ketama MD5 ring as Dubbo builds
 * it (see `hash-ring.ts`): `virtualNodes` nodes for weight 100, proportionally more or fewer for other
 * weights (at least 1), none for weight 0.
 *
 * The ring is rebuilt only when the set of (address, weight) pairs changes. Each pick compares the list
 * with the previous one position by position (no allocation); a mere reordering of the same providers
 * only remaps indexes. Warm-up is deliberately not applied: a ramping weight would rebuild the ring on
 * every pick and reshuffle keys while the provider warms up.
 */

import { hashKey } from './hash-key.js';
import { buildHashRing, type HashRing, type RingMember, ringHash, ringLookup } from './hash-ring.js';
import type { Endpoint, LoadBalancer, LoadBalancerOptions } from './load-balancer.js';

export interface ConsistentHashLoadBalancer extends LoadBalancer {
  /** How many times the ring was built so far (for tests and metrics). */
  readonly ringBuilds: number;
}

export function createConsistentHashLoadBalancer(options: LoadBalancerOptions): ConsistentHashLoadBalancer {
  let ring: HashRing | undefined;
  /** Ring members sorted by address, so the ring does not depend on list order. */
  let members: RingMember[] = [];
  const memberIndex = new Map<string, number>();
  /** `slot[member]` is that member's index in the list seen last. */
  let slot = new Int32Array(0);
  /** The list seen last, position by position: the cached signature. */
  const lastAddresses: string[] = [];
  const lastWeights: number[] = [];
  let builds = 0;

  function matchesLast(endpoints: readonly Endpoint[]): boolean {
    const n = endpoints.length;
    if (n !== lastAddresses.length) return false;
    for (let i = 0; i < n; i++) {
      const e = endpoints[i]!;
      if (e.address !== lastAddresses[i] || e.weight !== lastWeights[i]) return false;
    }
    return true;
  }

  function sync(endpoints: readonly Endpoint[]): void {
    const n = endpoints.length;
    if (!sameMembers(endpoints)) rebuild(endpoints);
    for (let i = 0; i < n; i++) {
      const e = endpoints[i]!;
      slot[memberIndex.get(e.address)!] = i;
      lastAddresses[i] = e.address;
      lastWeights[i] = e.weight;
    }
    lastAddresses.length = n;
    lastWeights.length = n;
  }

  function sameMembers(endpoints: readonly Endpoint[]): boolean {
    if (ring === undefined || endpoints.length !== members.length) return false;
    for (const e of endpoints) {
      const index = memberIndex.get(e.address);
      if (index === undefined || members[index]!.weight !== e.weight) return false;
    }
    return true;
  }

  function rebuild(endpoints: readonly Endpoint[]): void {
    members = endpoints.map((e) => ({ address: e.address, weight: e.weight }));
    members.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    memberIndex.clear();
    for (let i = 0; i < members.length; i++) memberIndex.set(members[i]!.address, i);
    slot = new Int32Array(members.length);
    ring = buildHashRing(members, options.virtualNodes);
    builds++;
  }

  const balancer: ConsistentHashLoadBalancer = {
    select(endpoints, invocation) {
      if (endpoints.length === 1) return endpoints[0]!;
      if (!matchesLast(endpoints)) sync(endpoints);
      const key = hashKey(invocation.args, options.hashArguments);
      return endpoints[slot[ringLookup(ring!, ringHash(key))]!]!;
    },
    get ringBuilds() {
      return builds;
    },
  };
  return balancer;
}

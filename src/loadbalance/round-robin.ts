/**
 * `roundrobin`: smooth weighted round robin, exactly as nginx does it. On every pick each provider's
 * `current` grows by its (warmed-up, learnt: effective-weight.ts) weight, the provider with the largest `current` wins (the first in
 * list order on a tie) and the winner's `current` drops by the sum of the weights. Weights {a:5, b:1, c:1}
 * give `a a b a c a a`, spreading the heavy provider out instead of sending it five calls in a row.
 *
 * State is kept per provider address. Providers that left the list are forgotten; providers that stay
 * keep their `current` across list changes; newcomers start at 0.
 */

import { balancingWeight } from './effective-weight.js';
import type { Endpoint, LoadBalancer, LoadBalancerOptions } from './load-balancer.js';

interface PeerState {
  /** nginx's `current_weight`. */
  current: number;
  /** The list change (tick) at which this address was last in the list. */
  seen: number;
}

export function createRoundRobinLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const peers = new Map<string, PeerState>();
  /** The list seen last, and its peers' states by position: a repeated list needs no map lookups. */
  const lastAddresses: string[] = [];
  const slots: PeerState[] = [];
  let tick = 0;
  /** Plain rotation, used only when every weight is 0. */
  let rotation = 0;

  function matchesLast(endpoints: readonly Endpoint[]): boolean {
    const n = endpoints.length;
    if (n !== lastAddresses.length) return false;
    for (let i = 0; i < n; i++) if (endpoints[i]!.address !== lastAddresses[i]) return false;
    return true;
  }

  /** Finds or creates the states of a new list, forgetting the providers that left it. */
  function sync(endpoints: readonly Endpoint[]): void {
    const n = endpoints.length;
    tick++;
    for (let i = 0; i < n; i++) {
      const address = endpoints[i]!.address;
      let state = peers.get(address);
      if (state === undefined) {
        state = { current: 0, seen: tick };
        peers.set(address, state);
      } else {
        state.seen = tick;
      }
      slots[i] = state;
      lastAddresses[i] = address;
    }
    slots.length = n;
    lastAddresses.length = n;
    if (peers.size > n) {
      for (const [address, state] of peers) if (state.seen !== tick) peers.delete(address);
    }
  }

  return {
    select(endpoints) {
      const n = endpoints.length;
      if (!matchesLast(endpoints)) sync(endpoints);
      const now = options.now();
      let total = 0;
      let best = -1;
      let bestState: PeerState | undefined;
      for (let i = 0; i < n; i++) {
        const e = endpoints[i]!;
        const w = balancingWeight(e, now, options);
        if (w <= 0) continue;
        const state = slots[i]!;
        state.current += w;
        total += w;
        if (bestState === undefined || state.current > bestState.current) {
          best = i;
          bestState = state;
        }
      }
      if (bestState === undefined) {
        // Every weight is 0: select must still answer, so rotate evenly.
        const index = rotation % n;
        rotation = index + 1;
        return endpoints[index]!;
      }
      bestState.current -= total;
      return endpoints[best]!;
    },
  };
}

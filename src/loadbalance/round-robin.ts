/**
 * `roundrobin`: smooth weighted round robin, exactly as nginx does it. On every pick each provider's
 * `current` grows by its (warmed-up) weight, the provider with the largest `current` wins (the first in
 * list order on a tie) and the winner's `current` drops by the sum of the weights. Weights {a:5, b:1, c:1}
 * give `a a b a c a a`, spreading the heavy provider out instead of sending it five calls in a row.
 *
 * State is kept per provider address. Providers that left the list are forgotten; providers that stay
 * keep their `current` across list changes; newcomers start at 0.
 */
import type { LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { warmupWeight } from './warmup.js';

interface PeerState {
  /** nginx's `current_weight`. */
  current: number;
  /** The pick (tick) at which this address was last in the list. */
  seen: number;
}

export function createRoundRobinLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const peers = new Map<string, PeerState>();
  let tick = 0;
  /** Plain rotation, used only when every weight is 0. */
  let rotation = 0;

  const balancer: LoadBalancer = {
    select(endpoints) {
      const n = endpoints.length;
      const now = options.now();
      const warmupMs = options.warmupMs;
      tick++;
      let total = 0;
      let best = -1;
      let bestState: PeerState | undefined;
      for (let i = 0; i < n; i++) {
        const e = endpoints[i]!;
        let state = peers.get(e.address);
        if (state === undefined) {
          state = { current: 0, seen: tick };
          peers.set(e.address, state);
        } else {
          state.seen = tick;
        }
        const w = warmupWeight(e.weight, e.startTime, now, warmupMs);
        if (w <= 0) continue;
        state.current += w;
        total += w;
        if (bestState === undefined || state.current > bestState.current) {
          best = i;
          bestState = state;
        }
      }
      if (peers.size > n) forgetDeparted();
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

  function forgetDeparted(): void {
    for (const [address, state] of peers) {
      if (state.seen !== tick) peers.delete(address);
    }
  }

  return balancer;
}

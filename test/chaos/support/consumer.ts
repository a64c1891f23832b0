/**
 * Observing a consumer from a chaos test: which providers its directories hold, which provider its load
 * balancer picks and when (a spying balancer registered through the public extension API), and where
 * each failed call went (a consumer filter).
 */

import { appInternals } from '../../../src/app/internals.js';
import { createRoundRobinLoadBalancer, type LoadBalancerOptions } from '../../../src/extend.js';
import type { AppOptions, CallistoApp, Filter, Invocation } from '../../../src/index.js';

// The `spy` balancer's name, known to the compiler (as a user extension declares its name).
declare module '../../../src/index.js' {
  interface LoadBalancerNames {
    spy: true;
  }
}

/** Addresses of every provider the consumer's directories hold now. */
export function knownProviders(app: CallistoApp): Set<string> {
  const addresses = new Set<string>();
  for (const source of appInternals(app).consumer.directories().values()) {
    for (const endpoint of source.list()) addresses.add(endpoint.address);
  }
  return addresses;
}

/** Whether the consumer may route calls to `address` now: listed, connected (or connecting), not going away. */
export function routable(app: CallistoApp, address: string): boolean {
  return knownProviders(app).has(address) && appInternals(app).consumer.pool.isAvailable(address);
}

export interface PickSpy {
  /** `extend` option of the consumer app: registers the `spy` balancer (round robin underneath). */
  readonly extend: NonNullable<AppOptions['extend']>;
  /** When the balancer last picked `address` (Date.now), or 0. */
  lastPick(address: string): number;
  /** Picks of `address` since the spy was made. */
  picks(address: string): number;
}

/** A balancer that records its picks: use `loadbalance: 'spy'` on the reference. */
export function pickSpy(): PickSpy {
  const last = new Map<string, number>();
  const counts = new Map<string, number>();
  return {
    extend(extensions) {
      extensions.register('loadbalance', 'spy', (options: LoadBalancerOptions) => {
        const inner = createRoundRobinLoadBalancer(options);
        return {
          select(endpoints, invocation) {
            const chosen = inner.select(endpoints, invocation);
            last.set(chosen.address, Date.now());
            counts.set(chosen.address, (counts.get(chosen.address) ?? 0) + 1);
            return chosen;
          },
        };
      });
    },
    lastPick: (address) => last.get(address) ?? 0,
    picks: (address) => counts.get(address) ?? 0,
  };
}

export interface FailedCall {
  id: unknown;
  method: string;
  /** The provider the last attempt went to. */
  address: string | undefined;
  code: string;
}

/** A consumer filter that records where each failed call was last sent. */
export function failureTap(): { filter: Filter; failed: FailedCall[] } {
  const failed: FailedCall[] = [];
  const filter: Filter = (next) => (invocation: Invocation) =>
    next(invocation).catch((error: unknown) => {
      failed.push({
        id: invocation.args[0],
        method: invocation.method,
        address: invocation.remoteAddress,
        code: (error as { code?: string }).code ?? 'unknown',
      });
      throw error;
    });
  return { filter, failed };
}

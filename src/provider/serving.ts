/**
 * What every call of one provider shares, from the wire or in-process: its limits (connections,
 * execution slots, decoded elements), whether it still takes calls, and who waits for it to be idle.
 */
import { createPeerLimits, type PeerLimitOptions, type PeerLimits } from './peer-limits.js';

export interface Serving {
  readonly limits: PeerLimits;
  /** Set once new calls are refused with Shutdown (read by the shutdown filter). */
  refusing: boolean;
  /** A call ended: wakes `drain` once nothing executes. */
  ended(): void;
  /** Resolves true once no call executes, or false after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean>;
}

export function createServing(limits: PeerLimitOptions): Serving {
  const peerLimits = createPeerLimits(limits);
  const idleWaiters: Array<() => void> = [];
  return {
    limits: peerLimits,
    refusing: false,
    ended() {
      if (peerLimits.calls === 0 && idleWaiters.length > 0) for (const wake of idleWaiters.splice(0)) wake();
    },
    drain(timeoutMs) {
      if (peerLimits.calls === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(peerLimits.calls === 0), timeoutMs);
        idleWaiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}

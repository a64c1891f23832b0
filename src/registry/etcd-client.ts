/**
 * The etcd3 client as the registry needs it: call deadlines, gRPC reconnect bounded by maxBackoffMs,
 * and cockatiel's retry and circuit-breaker policies replaced by our own (a breaker that stays open for
 * 5 s after an outage would delay recovery; the registry's own loop does the retrying):
 *
 * - a call that fails on one member of a cluster is retried on the next one (once per member);
 * - a member that failed is skipped for a short while (250 ms doubling up to 1 s) as long as another
 *   member has not failed, so that with one member down, calls and streams (watches, lease keepalives,
 *   which etcd3 opens on a random member) go to the live ones instead of landing on the dead one every
 *   third time; when every member has failed, all are tried (nothing waits on a stale verdict). With a
 *   single member nothing is ever skipped.
 */
import type * as Etcd3Module from 'etcd3';
import type { RegistryAddress, RegistryOptions } from './registry.js';
import { operationTimeoutMs } from './registry-options.js';

export type Etcd3 = typeof Etcd3Module;

/** A cockatiel-compatible policy that runs the call once (our own loop does the retrying). */
function passThroughPolicy(attempts: number, isRecoverable: (error: Error) => boolean): unknown {
  const noEvent = () => ({ dispose() {} });
  return {
    onSuccess: noEvent,
    onFailure: noEvent,
    async execute<T>(fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>, signal?: AbortSignal) {
      const context = { signal: signal ?? new AbortController().signal };
      let last: unknown;
      for (let i = 0; i < attempts; i++) {
        try {
          return await fn(context);
        } catch (error) {
          last = error;
          if (!(error instanceof Error) || !isRecoverable(error)) throw error;
        }
      }
      throw last;
    },
  };
}

/** How long a member that failed is skipped: 250 ms, doubling per failure in a row, at most this. */
export const ETCD_MEMBER_SKIP_MAX_MS = 1_000;

interface MemberHealth {
  failures: number;
  skipUntil: number;
}

/**
 * One member's policy: skips it (a recoverable "unavailable" error before any call is made, so etcd3
 * moves on to the next member) while it failed recently and another member has not; records failures,
 * including those of streams (etcd3 reports them through `execute` too).
 */
function memberPolicy(
  etcd: Etcd3,
  member: string,
  health: Map<string, MemberHealth>,
  isRecoverable: (error: Error) => boolean,
): unknown {
  const noEvent = () => ({ dispose() {} });
  const own: MemberHealth = { failures: 0, skipUntil: 0 };
  health.set(member, own);
  const othersHealthy = (now: number): boolean =>
    [...health.values()].some((other) => other !== own && other.skipUntil <= now);
  return {
    onSuccess: noEvent,
    onFailure: noEvent,
    async execute<T>(fn: (context: { signal: AbortSignal }) => T | PromiseLike<T>, signal?: AbortSignal) {
      const now = Date.now();
      if (own.skipUntil > now && othersHealthy(now)) {
        throw new etcd.GRPCUnavailableError(`etcd member ${member} failed moments ago; trying another`);
      }
      try {
        const result = await fn({ signal: signal ?? new AbortController().signal });
        // a stream is only opened here; how it fares is reported later (markFailed)
        if (!isStream(result)) own.failures = 0;
        return result;
      } catch (error) {
        if (error instanceof Error && isRecoverable(error)) {
          own.failures++;
          own.skipUntil =
            Date.now() + Math.min(ETCD_MEMBER_SKIP_MAX_MS, 250 * 2 ** Math.min(own.failures - 1, 10));
        }
        throw error;
      }
    },
  };
}

function isStream(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { on?: unknown }).on === 'function';
}

/** A cockatiel-compatible backoff that always waits `ms` (only used between our own watch restarts). */
function constantBackoff(ms: number): unknown {
  const backoff = { duration: ms, next: () => backoff };
  return backoff;
}

export function createEtcdClient(
  etcd: Etcd3,
  address: RegistryAddress,
  options: RegistryOptions,
): Etcd3Module.Etcd3 {
  const timeoutMs = operationTimeoutMs(options);
  const { username, password } = address.params;
  const health = new Map<string, MemberHealth>();
  return new etcd.Etcd3({
    hosts: address.hosts.map((host) => (/^https?:\/\//.test(host) ? host : `http://${host}`)),
    dialTimeout: timeoutMs,
    ...(username && password ? { auth: { username, password } } : {}),
    defaultCallOptions: (call) => (call.service === 'Watch' ? {} : { deadline: Date.now() + timeoutMs }),
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': options.maxBackoffMs,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': timeoutMs,
    },
    faultHandling: {
      host: (member: string) =>
        (address.hosts.length > 1
          ? memberPolicy(etcd, member, health, etcd.isRecoverableError)
          : passThroughPolicy(1, etcd.isRecoverableError)) as never,
      global: passThroughPolicy(address.hosts.length, etcd.isRecoverableError) as never,
      watchBackoff: constantBackoff(100) as never,
    },
  });
}

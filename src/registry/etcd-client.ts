/**
 * The etcd3 client as the registry needs it: call deadlines, gRPC reconnect bounded by maxBackoffMs,
 * and cockatiel's retry and circuit-breaker policies replaced by pass-through ones (a breaker that stays
 * open for 5 s after an outage would delay recovery; the registry's own loop does the retrying).
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
      host: () => passThroughPolicy(1, etcd.isRecoverableError) as never,
      global: passThroughPolicy(address.hosts.length, etcd.isRecoverableError) as never,
      watchBackoff: constantBackoff(100) as never,
    },
  });
}

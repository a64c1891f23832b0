/**
 * What is counted for one method on one side (provider or consumer), kept in plain fields so that the
 * metric filters cost a few increments per call; the Prometheus collector and the admin `/stats` feed
 * read them when asked. Codes are RpcError codes, `OK` for success.
 */
import type { ServiceKey } from '../core/service-key.js';
import { LatencyHistogram } from './latency-histogram.js';
import { WindowedLatency } from './latency-window.js';
import { StreamMetrics } from './stream-metrics.js';

export type MetricSide = 'provider' | 'consumer';

export interface LastFailure {
  /** ms since epoch */
  readonly time: number;
  readonly code: string;
  readonly message: string;
  /** What failed (not shown): the reference it was quoted under is read from it (error-payload.ts). */
  readonly error?: unknown;
}

/** Per provider address (consumer side), attempts by code. */
export interface PeerCounts {
  readonly byCode: Map<string, number>;
}

/** Longest failure message kept (the rest is cut): a failure's text is the caller's to choose. */
const MAX_MESSAGE = 300;

/**
 * Provider addresses kept apart per method; attempts to further addresses (providers that came and went
 * over a long life) are counted under `other`, so the `peer` label stays bounded.
 */
export const MAX_PEERS_PER_METHOD = 64;
export const OTHER_PEER = 'other';

export class MethodMetrics {
  /** Successful calls. */
  ok = 0;
  /** Failed calls by code (refusals included). */
  readonly failures = new Map<string, number>();
  inFlight = 0;
  /** Latency: the histogram, and min, max and mean since start and per window. */
  readonly latency: WindowedLatency;
  lastFailure: LastFailure | undefined = undefined;
  /** Consumer: attempts after the first of a call. */
  retries = 0;
  /** Consumer: retries that went to another provider than the attempt before. */
  failovers = 0;
  /** Consumer: attempts by provider address and code. */
  readonly peers = new Map<string, PeerCounts>();
  /**
   * Calls shed under overload, by reason (core/shed.ts): on the provider `deadline` (deadline-aware
   * admission) and `expired` (deadline passed while waiting), on the consumer `throttled` (attempts
   * refused by adaptive throttling).
   */
  readonly shed = new Map<string, number>();
  /** Request / answer body bytes, where the side knows them. */
  bytesIn = 0;
  bytesOut = 0;
  /** The method's streams (made at its first one); undefined for a method that never streamed. */
  streams: StreamMetrics | undefined = undefined;
  /**
   * Provider: how long its calls waited between being read and their method starting to run (behind the
   * frames read before them, a filter that answered later, the loop's other work); made at the first.
   */
  queue: LatencyHistogram | undefined = undefined;

  constructor(
    readonly side: MetricSide,
    readonly service: ServiceKey,
    readonly method: string,
    /** Length of a latency window, ms (`statsWindowMs`). */
    windowMs?: number,
  ) {
    this.latency = new WindowedLatency(windowMs);
  }

  get calls(): number {
    let calls = this.ok;
    for (const count of this.failures.values()) calls += count;
    return calls;
  }

  /** A call ended with `code` (not OK); `error` is what it failed with. */
  failed(code: string, message: string, error?: unknown, now: number = Date.now()): void {
    this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
    this.lastFailure = {
      time: now,
      code,
      message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message,
      error,
    };
  }

  /** The stream counters, made at the first stream. */
  streamMetrics(): StreamMetrics {
    this.streams ??= new StreamMetrics();
    return this.streams;
  }

  /** Provider: a call's method started running `ms` after the call was read. */
  queued(ms: number): void {
    this.queue ??= new LatencyHistogram();
    this.queue.observe(ms);
  }

  /** A call (or, on the consumer, an attempt) was shed for `reason`. */
  shedFor(reason: string): void {
    this.shed.set(reason, (this.shed.get(reason) ?? 0) + 1);
  }

  /** An attempt to `address` ended with `code` (`OK` for success). */
  attempt(address: string, code: string): void {
    let peer = this.peers.get(address);
    if (peer === undefined && this.peers.size >= MAX_PEERS_PER_METHOD) {
      address = OTHER_PEER;
      peer = this.peers.get(address);
    }
    if (peer === undefined) {
      peer = { byCode: new Map() };
      this.peers.set(address, peer);
    }
    peer.byCode.set(code, (peer.byCode.get(code) ?? 0) + 1);
  }

  /** Calls by code, `OK` first. */
  byCode(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.ok > 0) out.OK = this.ok;
    for (const [code, count] of this.failures) out[code] = count;
    return out;
  }
}

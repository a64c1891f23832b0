/**
 * What is counted for the streams of one method on one side (a part of its {@link MethodMetrics}, made
 * at its first stream): streams opened, open now, ended by outcome code, their messages each way and
 * their durations. The messages of open streams are read from their meters when asked (scrape,
 * `/stats`), so counting costs nothing per message beyond the meter's own count, and the totals move
 * while a long stream is still open.
 */
import type { InvocationStream } from '../core/invocation.js';
import { LatencyHistogram, STREAM_DURATION_BUCKETS_SECONDS } from './latency-histogram.js';

export class StreamMetrics {
  opened = 0;
  /** Ended streams by code (`OK` for a clean end). */
  readonly ended = new Map<string, number>();
  /** Durations of ended streams (STREAM_DURATION_BUCKETS_SECONDS: 10 ms to 4 h). */
  readonly duration = new LatencyHistogram(STREAM_DURATION_BUCKETS_SECONDS);
  readonly #open = new Set<InvocationStream>();
  #endedIn = 0;
  #endedOut = 0;

  /** Streams open now. */
  get open(): number {
    return this.#open.size;
  }

  /** Messages received (`in`) or sent (`out`) by every stream so far, the open ones included. */
  messages(direction: 'in' | 'out'): number {
    let total = direction === 'in' ? this.#endedIn : this.#endedOut;
    for (const stream of this.#open) total += direction === 'in' ? stream.messagesIn : stream.messagesOut;
    return total;
  }

  started(stream: InvocationStream): void {
    this.opened++;
    this.#open.add(stream);
  }

  /** `stream` ended with `code` after `ms`. */
  finished(stream: InvocationStream, code: string, ms: number): void {
    if (!this.#open.delete(stream)) return;
    this.#endedIn += stream.messagesIn;
    this.#endedOut += stream.messagesOut;
    this.ended.set(code, (this.ended.get(code) ?? 0) + 1);
    this.duration.observe(ms);
  }

  /** Ended streams by code. */
  byCode(): Record<string, number> {
    return Object.fromEntries(this.ended);
  }
}

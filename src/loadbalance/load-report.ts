/**
 * A provider's load as it reports it to its consumers (docs/protocol.md, "Load reports"): the calls it
 * has in flight, its adaptive concurrency limit, the calls waiting for a worker thread, its event loop's
 * delay and whether it counts as overloaded. It travels as one response attachment, `callisto-load`,
 * on some answers (at most one per connection per report period, and only when it changed) and on
 * heartbeat pongs; the consumer keeps the last one per endpoint (endpoint-stats.ts), where `p2c` reads
 * it (p2c.ts).
 *
 * The value is five numbers in ASCII, comma-separated, in this order: in-flight, limit, queued,
 * event-loop delay (ms, whole), overloaded (1 or 0), e.g. `12,340,0,3,0` — about 20 bytes. A consumer
 * that does not know the attachment ignores it; a value it cannot read is ignored too.
 */

/** The response attachment (and pong attachment) that carries a provider's load. */
export const LOAD_ATTACHMENT = 'callisto-load';

export interface ReportedLoad {
  /** Calls in flight in the provider (every consumer's). */
  readonly inflight: number;
  /** Its concurrency limit: the adaptive limit, or `server.maxConcurrentCalls` when that is off. */
  readonly limit: number;
  /** Calls waiting for a worker thread (methods with a worker executor). */
  readonly queued: number;
  /** Its event loop's mean delay over the last 100 ms, ms (0 when not watched). */
  readonly loopDelayMs: number;
  /** Whether it counts as overloaded (its adaptive limit refuses calls). */
  readonly overloaded: boolean;
}

/** The attachment value of `load`. */
export function formatLoad(load: ReportedLoad): string {
  return `${load.inflight},${load.limit},${load.queued},${Math.round(load.loopDelayMs)},${load.overloaded ? 1 : 0}`;
}

const MAX_LOAD_TEXT = 64;

/** Reads an attachment value; `undefined` for anything that is not five non-negative numbers. */
export function parseLoad(text: string): ReportedLoad | undefined {
  if (text.length > MAX_LOAD_TEXT) return undefined;
  const parts = text.split(',');
  if (parts.length < 5) return undefined;
  const inflight = Number(parts[0]);
  const limit = Number(parts[1]);
  const queued = Number(parts[2]);
  const loopDelayMs = Number(parts[3]);
  if (!(inflight >= 0 && limit > 0 && queued >= 0 && loopDelayMs >= 0)) return undefined;
  return { inflight, limit, queued, loopDelayMs, overloaded: parts[4] === '1' };
}

/**
 * How pressed a provider says it is, [0, 2]: its in-flight calls (and queued ones) as a share of its
 * limit, at most 1, plus 1 while it counts as overloaded. 0 when it reported nothing.
 */
export function loadPressure(load: ReportedLoad | undefined): number {
  if (load === undefined) return 0;
  const share = (load.inflight + load.queued) / load.limit;
  return Math.min(share, 1) + (load.overloaded ? 1 : 0);
}

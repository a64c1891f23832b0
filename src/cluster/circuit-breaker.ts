/**
 * Outlier detection (a per-provider circuit breaker, as Envoy's outlier detection and Hystrix's breaker):
 * a provider is ejected after `consecutiveFailures` network/timeout failures in a row, or when more than
 * `errorRateThreshold` of its calls failed over the last `windowMs` (with at least `minRequests` calls).
 * An ejection lasts `baseEjectionMs`, doubled on every repeated ejection up to `maxEjectionMs`; then the
 * provider is half-open: one probe call is let through (`allow` answers true once), its success closes
 * the breaker, its failure ejects again for longer. `filter` never removes more than
 * `maxEjectionRatio` of a list (at least one may go), and never all of it.
 *
 * Use per call: `filter(endpoints)` -> balancer `select` -> `allow(chosen.address)` (marks the probe of a
 * half-open provider as taken; synchronous with `filter`, so it answers true) -> the call ->
 * `record(address, ok, isNetworkOrTimeout)`. Nothing is emitted globally: `state` and `snapshot` are for
 * metrics and the dashboard.
 */
import { ConfigError } from '../core/config-error.js';
import { createWindowCounter, type WindowCounter } from '../loadbalance/window-counter.js';

export type OutlierState = 'closed' | 'open' | 'half-open';

export interface OutlierDetectorOptions {
  /** Network/timeout failures in a row that eject a provider. Default 5. */
  consecutiveFailures: number;
  /** Error rate (0..1) over the window above which a provider is ejected. Default 0.5. */
  errorRateThreshold: number;
  /** Calls needed in the window before the error rate is judged. Default 20. */
  minRequests: number;
  /** The error-rate window, ms. Default 10000. */
  windowMs: number;
  /** Buckets the window is kept in (its resolution). Default 10. */
  windowBuckets: number;
  /** First ejection period, ms; doubled on each repeated ejection. Default 10000. */
  baseEjectionMs: number;
  /** Longest ejection period, ms; a provider closed this long starts again from `baseEjectionMs`. Default 300000. */
  maxEjectionMs: number;
  /** Largest share (0..1) of a list that `filter` removes; at least one provider may be removed. Default 0.4. */
  maxEjectionRatio: number;
  /** A probe with no recorded outcome after this many ms (a lost call) is handed out again. Default 10000. */
  probeTimeoutMs: number;
  /** Clock, ms. Default Date.now. */
  now: () => number;
}

export const DEFAULT_OUTLIER_OPTIONS: OutlierDetectorOptions = {
  consecutiveFailures: 5,
  errorRateThreshold: 0.5,
  minRequests: 20,
  windowMs: 10_000,
  windowBuckets: 10,
  baseEjectionMs: 10_000,
  maxEjectionMs: 300_000,
  maxEjectionRatio: 0.4,
  probeTimeoutMs: 10_000,
  now: Date.now,
};

/** One provider's breaker, for metrics and the dashboard. */
export interface OutlierSnapshot {
  readonly address: string;
  readonly state: OutlierState;
  /** Ejections in a row (the back-off level); 0 when the provider has been healthy long enough. */
  readonly ejections: number;
  /** When the current ejection ends (ms, clock of `now`), 0 when closed. */
  readonly ejectedUntil: number;
  /** Error rate over the window, 0..1. */
  readonly errorRate: number;
}

export interface OutlierDetector {
  /**
   * Records a call's outcome. `ok` false for failures that say something about the provider's health
   * (not business errors); `errorIsNetworkOrTimeout` (default true) says whether the failure counts
   * towards `consecutiveFailures` (every failure counts towards the error rate).
   */
  record(address: string, ok: boolean, errorIsNetworkOrTimeout?: boolean): void;
  /** Whether a call may go to `address` now; for a half-open provider, true once (the probe). */
  allow(address: string): boolean;
  /** The selectable endpoints: the same array when none is excluded, never an empty one. */
  filter<E extends { readonly address: string }>(endpoints: readonly E[]): readonly E[];
  state(address: string): OutlierState;
  /** Every provider with recorded outcomes. */
  snapshot(): OutlierSnapshot[];
  /** Drops what is known about `address` (a provider that left for good). */
  forget(address: string): void;
  /** Ejections since the detector was made, every provider together (metrics). */
  readonly ejectionsTotal: number;
}

interface Health {
  consecutive: number;
  /** Channel 0: calls, channel 1: failures. */
  window: WindowCounter;
  /** Whether the provider is ejected (open, or half-open once `ejectedUntil` passed). */
  ejected: boolean;
  ejectedUntil: number;
  ejections: number;
  closedAt: number;
  /** When the half-open probe was handed out, 0 while it is available. */
  probeAt: number;
}

const CALLS = 0;
const FAILURES = 1;

/** Fills `options` from `DEFAULT_OUTLIER_OPTIONS` and validates every field. */
export function resolveOutlierOptions(options: Partial<OutlierDetectorOptions> = {}): OutlierDetectorOptions {
  const o: OutlierDetectorOptions = { ...DEFAULT_OUTLIER_OPTIONS, ...options };
  const check = (key: keyof OutlierDetectorOptions, ok: boolean, expected: string) => {
    if (!ok) throw new ConfigError(`outlier.${key}`, o[key], expected);
  };
  check(
    'consecutiveFailures',
    Number.isInteger(o.consecutiveFailures) && o.consecutiveFailures >= 1,
    'an integer >= 1',
  );
  check('errorRateThreshold', o.errorRateThreshold >= 0 && o.errorRateThreshold <= 1, 'a number in [0, 1]');
  check('minRequests', Number.isInteger(o.minRequests) && o.minRequests >= 1, 'an integer >= 1');
  check('windowMs', o.windowMs > 0, 'a number > 0');
  check('windowBuckets', Number.isInteger(o.windowBuckets) && o.windowBuckets >= 1, 'an integer >= 1');
  check('baseEjectionMs', o.baseEjectionMs > 0, 'a number > 0');
  check(
    'maxEjectionMs',
    o.maxEjectionMs >= o.baseEjectionMs,
    `a number >= baseEjectionMs (${o.baseEjectionMs})`,
  );
  check('maxEjectionRatio', o.maxEjectionRatio >= 0 && o.maxEjectionRatio <= 1, 'a number in [0, 1]');
  check('probeTimeoutMs', o.probeTimeoutMs > 0, 'a number > 0');
  check('now', typeof o.now === 'function', 'a function returning ms');
  return o;
}

export function createOutlierDetector(options: Partial<OutlierDetectorOptions> = {}): OutlierDetector {
  const o = resolveOutlierOptions(options);
  const table = new Map<string, Health>();
  /** How many providers are ejected (open or half-open): 0 makes `filter` free. */
  let ejectedCount = 0;
  let ejectionsTotal = 0;
  /**
   * Ejected providers the last `filter` kept selectable because of `maxEjectionRatio` (or to avoid an
   * empty list): `allow` agrees with `filter` for them, as the two are used together, synchronously.
   */
  const readmitted = new Set<string>();

  function health(address: string): Health {
    let h = table.get(address);
    if (h === undefined) {
      h = {
        consecutive: 0,
        window: createWindowCounter(o.windowMs, o.windowBuckets, 2),
        ejected: false,
        ejectedUntil: 0,
        ejections: 0,
        closedAt: 0,
        probeAt: 0,
      };
      table.set(address, h);
    }
    return h;
  }

  function stateOf(h: Health | undefined, now: number): OutlierState {
    if (h === undefined || !h.ejected) return 'closed';
    return now < h.ejectedUntil ? 'open' : 'half-open';
  }

  function eject(h: Health, now: number): void {
    if (!h.ejected) {
      if (h.ejections > 0 && now - h.closedAt >= o.maxEjectionMs) h.ejections = 0;
      h.ejected = true;
      ejectedCount++;
    }
    ejectionsTotal++;
    h.ejections++;
    const period = o.baseEjectionMs * 2 ** (h.ejections - 1);
    h.ejectedUntil = now + Math.min(period, o.maxEjectionMs);
    h.probeAt = 0;
    h.consecutive = 0;
  }

  function close(h: Health, now: number): void {
    if (h.ejected) ejectedCount--;
    h.ejected = false;
    h.ejectedUntil = 0;
    h.probeAt = 0;
    h.closedAt = now;
    h.consecutive = 0;
    h.window.clear();
  }

  /** Whether `filter` leaves `h` out: open, or half-open with its probe out. */
  function excluded(h: Health | undefined, now: number): boolean {
    if (h === undefined || !h.ejected) return false;
    if (now < h.ejectedUntil) return true;
    return h.probeAt !== 0 && now - h.probeAt < o.probeTimeoutMs;
  }

  function errorRate(h: Health, now: number): number {
    const calls = h.window.sum(CALLS, now);
    return calls > 0 ? h.window.sum(FAILURES, now) / calls : 0;
  }

  return {
    get ejectionsTotal() {
      return ejectionsTotal;
    },
    record(address, ok, errorIsNetworkOrTimeout = true) {
      const now = o.now();
      const h = health(address);
      const state = stateOf(h, now);
      if (state === 'open') return; // a late outcome of a call sent before the ejection
      if (state === 'half-open') {
        if (ok) close(h, now);
        else eject(h, now);
        return;
      }
      h.window.add(CALLS, 1, now);
      if (ok) {
        h.consecutive = 0;
        return;
      }
      h.window.add(FAILURES, 1, now);
      if (errorIsNetworkOrTimeout && ++h.consecutive >= o.consecutiveFailures) {
        eject(h, now);
        return;
      }
      const calls = h.window.sum(CALLS, now);
      if (calls >= o.minRequests && h.window.sum(FAILURES, now) / calls > o.errorRateThreshold) eject(h, now);
    },

    allow(address) {
      if (ejectedCount === 0) return true;
      const h = table.get(address);
      const now = o.now();
      const state = stateOf(h, now);
      if (state === 'closed' || readmitted.has(address)) return true;
      if (state === 'open' || excluded(h, now)) return false;
      h!.probeAt = now;
      return true;
    },

    filter(endpoints) {
      if (readmitted.size > 0) readmitted.clear();
      if (ejectedCount === 0) return endpoints;
      const now = o.now();
      const n = endpoints.length;
      let out = 0;
      for (let i = 0; i < n; i++) if (excluded(table.get(endpoints[i]!.address), now)) out++;
      if (out === 0) return endpoints;
      const cap = o.maxEjectionRatio <= 0 ? 0 : Math.max(1, Math.floor(n * o.maxEjectionRatio + 1e-9));
      const isOut = (e: { readonly address: string }) => excluded(table.get(e.address), now);
      // Never return an empty list: with a cap of every provider, all stay selectable.
      if (cap === 0 || cap >= n) {
        for (const e of endpoints) if (isOut(e)) readmitted.add(e.address);
        return endpoints;
      }
      if (out <= cap) return endpoints.filter((e) => !isOut(e));
      // Over the cap: keep out the `cap` ejected longest, readmit those closest to their probe.
      const keepOut = new Set(
        endpoints
          .filter(isOut)
          .sort((a, b) => table.get(b.address)!.ejectedUntil - table.get(a.address)!.ejectedUntil)
          .slice(0, cap),
      );
      for (const e of endpoints) if (isOut(e) && !keepOut.has(e)) readmitted.add(e.address);
      return endpoints.filter((e) => !keepOut.has(e));
    },

    state(address) {
      return stateOf(table.get(address), o.now());
    },

    snapshot() {
      const now = o.now();
      return [...table].map(([address, h]) => ({
        address,
        state: stateOf(h, now),
        ejections: h.ejections,
        ejectedUntil: h.ejectedUntil,
        errorRate: errorRate(h, now),
      }));
    },

    forget(address) {
      readmitted.delete(address);
      const h = table.get(address);
      if (h?.ejected) ejectedCount--;
      table.delete(address);
    },
  };
}

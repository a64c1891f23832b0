/**
 * Live figures for the service pages being looked at: every `refreshMs`, the `/stats` of each provider
 * of a watched key that serves admin endpoints (one read per admin address, however many keys it
 * serves), turned into per-method points: calls/s and error rate from the difference of the cumulative
 * counts, p50/p99 latency as the slowest provider reports them. A key is watched while the page asks for
 * it (for `WATCH_MS` after the last time).
 */
import type { ServiceKey } from '../index.js';
import type { ProviderRecord } from '../registry/index.js';
import type { AdminGate } from './admin-gate.js';
import { keyId } from './registry-watch.js';
import {
  type AdaptiveLimitFigures,
  type AdminAddress,
  type AdminReader,
  type MethodStats,
  parseStats,
  type StatsAnswer,
  type WindowStats,
} from './sources.js';

/** How long a key stays watched after the page last asked for it, ms. */
export const WATCH_MS = 30_000;
/** Points kept per key (two minutes at one a second). */
export const HISTORY_POINTS = 120;
/** Admin endpoints read at once. */
const READ_CONCURRENCY = 16;

export interface MethodPoint {
  readonly time: number;
  readonly callsPerSec: number;
  /** Failed calls over all calls in the interval, 0..1 (0 without calls). */
  readonly errorRate: number;
  readonly p50: number;
  readonly p99: number;
}

export interface MethodFigures {
  readonly method: string;
  readonly calls: number;
  readonly failures: number;
  readonly inFlight: number;
  /** Streams open now on every reporting provider (absent for a method that never streamed). */
  readonly openStreams?: number;
  /** The highest p99 queue time (read to running, ms) a reporting provider gives (absent before one ran). */
  readonly queueP99?: number;
  readonly points: MethodPoint[];
  /**
   * Min, max and mean latency over every reporting provider's latest window with calls (the mean
   * weighted by calls); absent before a window saw a call.
   */
  readonly window?: WindowStats;
  readonly lastFailure?: { time: number; code: string; message: string; ref?: string; provider: string };
}

export interface ProviderFigures {
  readonly calls: number;
  readonly failures: number;
  readonly callsPerSec: number;
  /** Its adaptive concurrency limit (for the whole provider, every service), when it is on. */
  readonly adaptiveLimit?: AdaptiveLimitFigures;
}

export interface KeyFigures {
  /** Providers whose figures came in at the last read, and those that serve no admin endpoints. */
  readonly reporting: number;
  readonly withoutAdmin: number;
  /** Why a provider's figures are missing, by address. */
  readonly errors: Record<string, string>;
  readonly methods: MethodFigures[];
  /** By provider address. */
  readonly providers: Record<string, ProviderFigures>;
}

export interface StatsFeed {
  /** Marks a key as looked at; its figures (empty until the first read). */
  figures(key: ServiceKey, providers: readonly ProviderRecord[]): KeyFigures;
  close(): void;
}

interface AdminState {
  answer?: StatsAnswer;
  error?: string;
}

interface Totals {
  time: number;
  calls: number;
  failures: number;
}

interface KeyState {
  key: ServiceKey;
  providers: readonly ProviderRecord[];
  lastAsked: number;
  history: Map<string, MethodPoint[]>;
  /** Previous totals by method, and by provider address. */
  previous: Map<string, Totals>;
  previousByProvider: Map<string, Totals>;
  rates: Map<string, number>;
}

const adminId = (admin: AdminAddress) => `${admin.host}|${admin.port}`;

function matches(entry: MethodStats, key: ServiceKey): boolean {
  return (
    entry.side === 'provider' &&
    entry.service === key.name &&
    entry.version === key.version &&
    entry.group === key.group
  );
}

const rate = (
  now: Totals,
  before: Totals | undefined,
): { calls: number; failures: number; seconds: number } => {
  if (!before || now.calls < before.calls || now.time <= before.time)
    return { calls: 0, failures: 0, seconds: 0 };
  return {
    calls: now.calls - before.calls,
    failures: Math.max(0, now.failures - before.failures),
    seconds: (now.time - before.time) / 1000,
  };
};

export function createStatsFeed(reader: AdminReader, gate: AdminGate, refreshMs: number): StatsFeed {
  const adminAddressOf = (record: ProviderRecord): AdminAddress | undefined => {
    const verdict = gate.of(record);
    return verdict.kind === 'ok' ? verdict.address : undefined;
  };
  const keys = new Map<string, KeyState>();
  const admins = new Map<string, AdminState>();
  let reading = false;
  let closed = false;

  const readAdmins = async (wanted: Map<string, AdminAddress>) => {
    const queue = [...wanted];
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [id, admin] = next;
        try {
          const answer = parseStats(await reader.read(admin, '/stats'));
          admins.set(id, { answer });
        } catch (error) {
          admins.set(id, { error: (error as Error).message });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, queue.length) }, worker));
    for (const id of admins.keys()) if (!wanted.has(id)) admins.delete(id);
  };

  const sample = (state: KeyState, now: number) => {
    const byMethod = new Map<string, { calls: number; failures: number; p50: number; p99: number }>();
    for (const record of state.providers) {
      const admin = adminAddressOf(record);
      const answer = admin && admins.get(adminId(admin))?.answer;
      if (!answer) continue;
      const address = `${record.host}:${record.port}`;
      const mine: Totals = { time: now, calls: 0, failures: 0 };
      for (const entry of answer.methods) {
        if (!matches(entry, state.key)) continue;
        mine.calls += entry.calls;
        mine.failures += entry.failures;
        const sum = byMethod.get(entry.method) ?? { calls: 0, failures: 0, p50: 0, p99: 0 };
        sum.calls += entry.calls;
        sum.failures += entry.failures;
        sum.p50 = Math.max(sum.p50, entry.latencyMs.p50);
        sum.p99 = Math.max(sum.p99, entry.latencyMs.p99);
        byMethod.set(entry.method, sum);
      }
      const delta = rate(mine, state.previousByProvider.get(address));
      state.rates.set(address, delta.seconds > 0 ? delta.calls / delta.seconds : 0);
      state.previousByProvider.set(address, mine);
    }
    for (const [method, sum] of byMethod) {
      const totals: Totals = { time: now, calls: sum.calls, failures: sum.failures };
      const delta = rate(totals, state.previous.get(method));
      state.previous.set(method, totals);
      const points = state.history.get(method) ?? [];
      points.push({
        time: now,
        callsPerSec: delta.seconds > 0 ? delta.calls / delta.seconds : 0,
        errorRate: delta.calls > 0 ? delta.failures / delta.calls : 0,
        p50: sum.p50,
        p99: sum.p99,
      });
      if (points.length > HISTORY_POINTS) points.splice(0, points.length - HISTORY_POINTS);
      state.history.set(method, points);
    }
  };

  const tick = async () => {
    if (reading || closed) return;
    reading = true;
    try {
      const now = Date.now();
      const wanted = new Map<string, AdminAddress>();
      for (const [id, state] of keys) {
        if (now - state.lastAsked > WATCH_MS) {
          keys.delete(id);
          continue;
        }
        for (const record of state.providers) {
          const admin = adminAddressOf(record);
          if (admin) wanted.set(adminId(admin), admin);
        }
      }
      await readAdmins(wanted);
      const sampled = Date.now();
      for (const state of keys.values()) sample(state, sampled);
    } finally {
      reading = false;
    }
  };

  const timer = setInterval(() => void tick(), refreshMs);
  timer.unref();

  return {
    figures(key, providers) {
      const id = keyId(key);
      let state = keys.get(id);
      const isNew = state === undefined;
      state ??= {
        key,
        providers,
        lastAsked: 0,
        history: new Map(),
        previous: new Map(),
        previousByProvider: new Map(),
        rates: new Map(),
      };
      state.providers = providers;
      state.lastAsked = Date.now();
      keys.set(id, state);
      if (isNew) void tick();
      const errors: Record<string, string> = {};
      const providerFigures: Record<string, ProviderFigures> = {};
      const lastFailures = new Map<string, NonNullable<MethodFigures['lastFailure']>>();
      const totals = new Map<
        string,
        { calls: number; failures: number; inFlight: number; openStreams?: number; queueP99?: number }
      >();
      const windows = new Map<string, WindowStats>();
      let reporting = 0;
      let withoutAdmin = 0;
      for (const record of providers) {
        const address = `${record.host}:${record.port}`;
        const verdict = gate.of(record);
        if (verdict.kind === 'none') {
          withoutAdmin++;
          continue;
        }
        if (verdict.kind === 'refused') {
          errors[address] = verdict.reason;
          continue;
        }
        const admin = verdict.address;
        const got = admins.get(adminId(admin));
        if (got?.error !== undefined) errors[address] = got.error;
        if (!got?.answer) continue;
        reporting++;
        let calls = 0;
        let failures = 0;
        for (const entry of got.answer.methods) {
          if (!matches(entry, key)) continue;
          calls += entry.calls;
          failures += entry.failures;
          const sum = totals.get(entry.method) ?? { calls: 0, failures: 0, inFlight: 0 };
          sum.calls += entry.calls;
          sum.failures += entry.failures;
          sum.inFlight += entry.inFlight;
          if (entry.openStreams !== undefined) sum.openStreams = (sum.openStreams ?? 0) + entry.openStreams;
          if (entry.queueP99 !== undefined) sum.queueP99 = Math.max(sum.queueP99 ?? 0, entry.queueP99);
          totals.set(entry.method, sum);
          if (entry.window !== undefined) {
            windows.set(entry.method, mergeWindows(windows.get(entry.method), entry.window));
          }
          const failure = entry.lastFailure;
          const known = lastFailures.get(entry.method);
          if (failure && (!known || failure.time > known.time)) {
            lastFailures.set(entry.method, { ...failure, provider: address });
          }
        }
        const adaptiveLimit = got.answer.adaptiveLimit;
        providerFigures[address] = {
          calls,
          failures,
          callsPerSec: state.rates.get(address) ?? 0,
          ...(adaptiveLimit === undefined ? {} : { adaptiveLimit }),
        };
      }
      const methods = [...totals]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([method, sum]): MethodFigures => {
          const lastFailure = lastFailures.get(method);
          const window = windows.get(method);
          return {
            method,
            ...sum,
            points: state.history.get(method) ?? [],
            ...(window === undefined ? {} : { window }),
            ...(lastFailure === undefined ? {} : { lastFailure }),
          };
        });
      return { reporting, withoutAdmin, errors, methods, providers: providerFigures };
    },
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}

/** Two providers' windows as one: the least min, the greatest max, the mean weighted by calls. */
function mergeWindows(a: WindowStats | undefined, b: WindowStats): WindowStats {
  if (a === undefined) return b;
  const calls = a.calls + b.calls;
  return {
    ms: Math.max(a.ms, b.ms),
    calls,
    minMs: Math.min(a.minMs, b.minMs),
    maxMs: Math.max(a.maxMs, b.maxMs),
    meanMs: calls === 0 ? 0 : (a.meanMs * a.calls + b.meanMs * b.calls) / calls,
  };
}

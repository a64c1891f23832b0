/**
 * The provider's load reports (docs/protocol.md, "Load reports"; loadbalance/load-report.ts): what it
 * tells its consumers of its load, on answers and on heartbeat pongs. The load is read at most once per
 * period (`server.loadReportMs`, default 50 ms) for the whole provider, and each new value that differs
 * from the last one gets a new version; a connection attaches a version to one answer, the first after
 * it appeared, and no other. So an answer costs one clock comparison and one number comparison, a
 * connection carries at most one report per period (about 40 bytes), and a provider whose load stays
 * the same sends none.
 */
import { tickMonotonic } from '../core/clock.js';
import type { Attachments } from '../core/invocation.js';
import { formatLoad, LOAD_ATTACHMENT, type ReportedLoad } from '../loadbalance/load-report.js';

/** The default `server.loadReportMs`. */
export const DEFAULT_LOAD_REPORT_MS = 50;

export interface LoadReports {
  /** The current report's version (reading the load if the period passed). */
  version(): number;
  /** The current report as attachments of its own (one shared frozen object per version). */
  readonly attachments: Attachments;
  /** `attachments` with the current report added (a copy). */
  merged(attachments: Attachments): Attachments;
}

export interface LoadReportsInit {
  /** The provider's load now. */
  readonly read: () => ReportedLoad;
  /** Read at most once per this many ms. */
  readonly periodMs: number;
  /** Monotonic clock, ms. Default: the tick clock (core/clock.ts). */
  readonly now?: () => number;
}

export function createLoadReports(init: LoadReportsInit): LoadReports {
  const now = init.now ?? tickMonotonic;
  let readAt = Number.NEGATIVE_INFINITY;
  let text = '';
  let version = 0;
  let attachments: Attachments = Object.freeze({});
  const refresh = (at: number): void => {
    readAt = at;
    const next = formatLoad(init.read());
    if (next === text) return;
    text = next;
    version++;
    attachments = Object.freeze({ [LOAD_ATTACHMENT]: next });
  };
  return {
    version() {
      const at = now();
      if (at - readAt >= init.periodMs) refresh(at);
      return version;
    },
    get attachments() {
      return attachments;
    },
    merged(extra) {
      return { ...extra, [LOAD_ATTACHMENT]: text };
    },
  };
}

/**
 * One connection's side: the attachments an answer goes out with — `attachments` as they are, or with
 * the report added when this connection has not carried the current version yet.
 */
export function createLoadAttacher(
  reports: LoadReports | undefined,
): (attachments: Attachments | undefined) => Attachments | undefined {
  if (reports === undefined) return (attachments) => attachments;
  let sent = 0;
  return (attachments) => {
    const version = reports.version();
    if (version === sent) return attachments;
    sent = version;
    return attachments === undefined ? reports.attachments : reports.merged(attachments);
  };
}

/** What a pong carries: the current report, always (a ping is rare, and asks how the provider is). */
export function pongLoad(reports: LoadReports): () => Attachments {
  return () => {
    reports.version();
    return reports.attachments;
  };
}

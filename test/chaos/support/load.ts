/**
 * Load for the chaos scenarios. `startLoad` issues calls at a steady rate (paced every 5 ms, catching up
 * after a stall); `startWindowLoad` keeps a constant number of calls in flight (each completion issues
 * the next). Both count outcomes and keep every failure (id, method, code, message, when). `stop()`
 * stops issuing, waits for the calls in flight, and returns the report.
 */
import { RpcError } from '../../../src/index.js';

export interface CallFailure {
  id: number;
  method: string;
  code: string;
  message: string;
  /** ms since the load started. */
  atMs: number;
}

export interface LoadReport {
  issued: number;
  ok: number;
  failures: CallFailure[];
  durationMs: number;
  /** Completed calls per second. */
  rate: number;
}

export interface Load {
  readonly issued: number;
  readonly completed: number;
  readonly ok: number;
  readonly inFlight: number;
  readonly failures: readonly CallFailure[];
  /** Resolves once `count` more calls completed than when called (a way to let load run for a while). */
  settle(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<LoadReport>;
}

export interface LoadOptions {
  /** Makes call `id` (ids are consecutive from `firstId`). */
  call: (id: number) => Promise<unknown>;
  /** The method name of call `id`, for failure reports. */
  method: (id: number) => string;
  firstId?: number;
}

function createCounter(options: LoadOptions) {
  const startedAt = Date.now();
  let nextId = options.firstId ?? 1;
  let issued = 0;
  let ok = 0;
  const failures: CallFailure[] = [];
  const inFlight = new Set<Promise<void>>();
  const waiters: Array<{ target: number; wake: () => void }> = [];
  const completed = () => ok + failures.length;
  const onDone = () => {
    const done = completed();
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (done >= waiters[i]!.target) waiters.splice(i, 1)[0]!.wake();
    }
  };
  const issue = (after?: () => void): void => {
    const id = nextId++;
    issued++;
    let call: Promise<unknown>;
    try {
      call = options.call(id);
    } catch (error) {
      call = Promise.reject(error);
    }
    const tracked = call.then(
      () => {
        ok++;
      },
      (error: unknown) => {
        const rpc = RpcError.from(error);
        failures.push({
          id,
          method: options.method(id),
          code: rpc.code,
          message: rpc.message,
          atMs: Date.now() - startedAt,
        });
      },
    );
    inFlight.add(tracked);
    void tracked.then(() => {
      inFlight.delete(tracked);
      onDone();
      after?.();
    });
  };
  const report = async (): Promise<LoadReport> => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
    const durationMs = Date.now() - startedAt;
    return {
      issued,
      ok,
      failures,
      durationMs,
      rate: Math.round((completed() * 1000) / Math.max(1, durationMs)),
    };
  };
  const view = {
    get issued() {
      return issued;
    },
    get completed() {
      return completed();
    },
    get ok() {
      return ok;
    },
    get inFlight() {
      return inFlight.size;
    },
    get failures() {
      return failures;
    },
    settle(count: number, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`load did not complete ${count} more calls in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          target: completed() + count,
          wake: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
  return { issue, report, view, startedAt };
}

/** Issues `ratePerSecond` calls per second until stopped. */
export function startLoad(options: LoadOptions & { ratePerSecond: number }): Load {
  const { issue, report, view, startedAt } = createCounter(options);
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - startedAt) * options.ratePerSecond) / 1000) - view.issued;
    for (let i = 0; i < due; i++) issue();
  }, 5);
  return Object.assign(view, {
    stop() {
      clearInterval(timer);
      return report();
    },
  }) as Load;
}

/** Keeps `window` calls in flight until stopped: every completion issues the next call. */
export function startWindowLoad(options: LoadOptions & { window: number }): Load {
  const { issue, report, view } = createCounter(options);
  let stopped = false;
  const next = (): void => {
    if (!stopped) issue(next);
  };
  for (let i = 0; i < options.window; i++) next();
  return Object.assign(view, {
    stop() {
      stopped = true;
      return report();
    },
  }) as Load;
}

/** One line for the logs: `[chaos] <scenario>: calls=… ok=… failed=… rate=…/s`. */
export function summary(scenario: string, report: LoadReport, extra: Record<string, unknown> = {}): string {
  const fields = {
    calls: report.issued,
    ok: report.ok,
    failed: report.failures.length,
    rate: `${report.rate}/s`,
    durationMs: report.durationMs,
    ...extra,
  };
  return `[chaos] ${scenario}: ${Object.entries(fields)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')}`;
}

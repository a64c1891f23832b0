/** Timing helpers of the registry drivers: bounded exponential backoff and operation timeouts. */

export interface Backoff {
  /** The next delay (ms): doubles from `initialMs` up to `maxMs`, with +-20 % jitter. */
  next(): number;
  /** Back to `initialMs` after a success. */
  reset(): void;
}

export function createBackoff(maxMs: number, initialMs = 100): Backoff {
  let attempt = 0;
  return {
    next() {
      const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
      attempt++;
      const jitter = base * 0.2 * (Math.random() * 2 - 1);
      return Math.max(1, Math.min(maxMs, Math.round(base + jitter)));
    },
    reset() {
      attempt = 0;
    },
  };
}

/** Rejects with `Error('<what> timed out after <ms> ms')` when `promise` takes longer; clears its timer. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A one-shot gate: `wait()` resolves at the next `open()`, rejects at `fail()`. */
export interface Gate {
  wait(): Promise<void>;
  open(): void;
  fail(error: Error): void;
}

export function createGate(): Gate {
  let waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  return {
    wait() {
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    open() {
      const current = waiters;
      waiters = [];
      for (const waiter of current) waiter.resolve();
    },
    fail(error) {
      const current = waiters;
      waiters = [];
      for (const waiter of current) waiter.reject(error);
    },
  };
}

/** A short description of an error for one log line. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

/**
 * One timer for many deadlines. Entries are bucketed by `resolutionMs`; a single unref'd timer runs
 * while there are entries and expires every bucket that is due. Completed calls are not removed from
 * their bucket (that would cost a search); `onExpire` is simply told the id and ignores ids it no longer
 * tracks. No per-call timers, no per-call closures.
 */
export interface DeadlineWheel {
  /** Tracks `id` until `deadline` (ms, Date.now clock). */
  add(id: number, deadline: number): void;
  /** Entries tracked (including already completed ones not yet swept). */
  readonly size: number;
  /** Stops the timer and forgets everything. */
  clear(): void;
}

export function createDeadlineWheel(onExpire: (id: number) => void, resolutionMs = 10): DeadlineWheel {
  const buckets = new Map<number, number[]>();
  let size = 0;
  let timer: NodeJS.Timeout | undefined;

  const sweep = (): void => {
    const due = Math.floor(Date.now() / resolutionMs);
    for (const [slot, ids] of buckets) {
      if (slot > due) continue;
      buckets.delete(slot);
      size -= ids.length;
      for (const id of ids) onExpire(id);
    }
    if (buckets.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    add(id, deadline) {
      // Round up so a call never expires before its deadline.
      const slot = Math.ceil(deadline / resolutionMs);
      const ids = buckets.get(slot);
      if (ids === undefined) buckets.set(slot, [id]);
      else ids.push(id);
      size++;
      if (timer === undefined) {
        timer = setInterval(sweep, resolutionMs);
        timer.unref();
      }
    },
    get size() {
      return size;
    },
    clear() {
      buckets.clear();
      size = 0;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}

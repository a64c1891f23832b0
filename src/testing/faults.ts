/**
 * Faults a test kit provider answers with, injected through a provider filter (the same seam as any
 * filter, at `FILTER_ORDER.provider['test-kit-faults']`: after Callisto's admission and before the
 * app's filters): a method fails with an error code, or answers late, or never (until its caller's
 * deadline, a cancel, or `heal`), for a number of calls or until healed. Every call is recorded.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { type ErrorCodeName, RpcError } from '../core/rpc-error.js';
import { checkStreamFaults, type StreamFaults } from './stream-faults.js';

/** One fault: what the method does, and for how many more calls (undefined: until healed). */
interface Fault {
  readonly kind: 'fail' | 'delay';
  readonly code?: ErrorCodeName;
  readonly message?: string;
  /** ms, or 'forever'. */
  readonly delay?: number | 'forever';
  remaining: number | undefined;
  /** The share of calls it applies to (spread evenly: with 0.05, every 20th call); undefined: all. */
  readonly share?: number | undefined;
  /** Calls it was considered for (with `share`). */
  seen: number;
}

/** A call a provider received. */
export interface ReceivedCall {
  readonly method: string;
  readonly args: readonly unknown[];
  readonly attachments: Readonly<Record<string, string>>;
}

export interface FaultPlan {
  /** The calls received, in order (faulty ones included). */
  readonly calls: readonly ReceivedCall[];
  fail(
    method: string,
    code: ErrorCodeName,
    message: string | undefined,
    times: number | undefined,
    share?: number,
  ): void;
  delay(method: string, ms: number | 'forever', times: number | undefined, share?: number): void;
  streamFault(method: string, faults: StreamFaults, times: number | undefined): void;
  /** The stream faults the next stream of `method` meets, taking one of their remaining streams. */
  takeStream(method: string): StreamFaults | undefined;
  /** Clears the faults of `method` (all methods when undefined) and lets calls held forever go on. */
  heal(method?: string): void;
  /** The provider filter that applies the plan. */
  readonly filter: NamedFilter;
}

const ANY = '*';

function checkedShare(share: number | undefined): number | undefined {
  if (share === undefined) return undefined;
  if (!(share > 0 && share <= 1)) throw new RangeError(`share must be in (0, 1], got ${share}`);
  return share;
}

export function createFaultPlan(name: string): FaultPlan {
  const faults = new Map<string, Fault[]>();
  const streamFaults = new Map<string, Array<{ faults: StreamFaults; remaining: number | undefined }>>();
  const calls: ReceivedCall[] = [];
  const held = new Set<() => void>();

  const add = (method: string, fault: Fault): void => {
    const list = faults.get(method) ?? [];
    list.push(fault);
    faults.set(method, list);
  };

  /** The fault the next call of `method` meets (taking one of its remaining calls), if any. */
  const take = (method: string): Fault | undefined => {
    for (const key of [method, ANY]) {
      const list = faults.get(key);
      const fault = list?.[0];
      if (fault === undefined) continue;
      if (fault.share !== undefined) {
        const before = Math.floor(fault.seen * fault.share);
        fault.seen++;
        if (Math.floor(fault.seen * fault.share) === before) continue;
      }
      if (fault.remaining !== undefined && --fault.remaining <= 0) list!.shift();
      return fault;
    }
    return undefined;
  };

  /** Waits `ms` (or until healed, for 'forever'), or rejects with the call's signal's reason. */
  const wait = (invocation: Invocation, ms: number | 'forever'): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const signal = invocation.signal;
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        held.delete(release);
        signal?.removeEventListener('abort', onAbort);
      };
      const release = () => {
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal!.reason);
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (ms === 'forever') held.add(release);
      else timer = setTimeout(release, ms);
    });

  return {
    calls,
    fail(method, code, message, times, share) {
      add(method, { kind: 'fail', code, message, remaining: times, share: checkedShare(share), seen: 0 });
    },
    delay(method, ms, times, share) {
      add(method, { kind: 'delay', delay: ms, remaining: times, share: checkedShare(share), seen: 0 });
    },
    streamFault(method, given, times) {
      checkStreamFaults(method, given);
      const list = streamFaults.get(method) ?? [];
      list.push({ faults: { ...given }, remaining: times });
      streamFaults.set(method, list);
    },
    takeStream(method) {
      for (const key of [method, ANY]) {
        const list = streamFaults.get(key);
        const entry = list?.[0];
        if (entry === undefined) continue;
        if (entry.remaining !== undefined && --entry.remaining <= 0) list!.shift();
        return entry.faults;
      }
      return undefined;
    },
    heal(method) {
      if (method === undefined) {
        faults.clear();
        streamFaults.clear();
      } else {
        faults.delete(method);
        streamFaults.delete(method);
      }
      for (const release of [...held]) release();
    },
    filter: defineFilter({
      name: 'test-kit-faults',
      position: 'provider',
      order: FILTER_ORDER.provider['test-kit-faults'],
      filter: (next) => async (invocation) => {
        calls.push({
          method: invocation.method,
          args: invocation.args,
          attachments: { ...invocation.attachments },
        });
        const fault = take(invocation.method);
        if (fault?.kind === 'fail') {
          throw new RpcError(
            fault.code!,
            fault.message ?? `${name}: injected ${fault.code} in ${invocation.method}`,
          );
        }
        if (fault?.kind === 'delay') await wait(invocation, fault.delay!);
        return next(invocation);
      },
    }),
  };
}

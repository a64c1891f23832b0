/**
 * The registry side of runtime control, shared by every engine that can read and compare-and-set a
 * segment's override record (registry-shell.ts wires it to the driver's `readConfig` / `writeConfig`):
 *
 * - `read(key)`: the record, checked (override-record.ts);
 * - `update(key, change)`: the record changed with compare-and-set, retried on conflict
 *   (override-update.ts); deleted when it changes nothing;
 * - `write(key, overrides)`: the record replaced (an update that ignores what is there);
 * - `watch(key, listener)`: the record read every `pollMs` while anyone follows it, listeners told the
 *   checked overrides once and on every change. Polling, not engine watches, so the same few lines work
 *   on every engine and through every reconnect: a read that fails keeps the last overrides, the next
 *   one catches up (while the registry is disconnected, after a first read, no read is sent at all). A malformed record is logged once (per content) and skipped: the last good
 *   overrides stay. A bad entry in a good record is logged once and skipped alone.
 */
import type { ServiceKey } from '../core/service-key.js';
import {
  emptyOverrides,
  encodeOverrides,
  isEmptyOverrides,
  parseOverrides,
  type ServiceOverrides,
} from './override-record.js';
import { type StoredConfig, updateConfigRecord } from './override-update.js';
import { servicePathSegment } from './provider-record.js';
import type { OverrideChange, OverrideListener, OverrideUpdateOptions } from './registry.js';
import { withTimeout } from './timing.js';

export interface OverrideFollowerParts {
  read(segment: string): Promise<StoredConfig>;
  write(segment: string, value: string | undefined, version: string): Promise<boolean>;
  readonly pollMs: number;
  readonly timeoutMs: number;
  /** Where a segment's record is, for messages. */
  location(segment: string): string;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** Throws when the registry is closed. */
  ensureOpen(what: string): void;
  /**
   * Whether the server is reachable now: while it is not, polls after the first read are skipped (a
   * client that queues commands offline would otherwise queue one per poll for the whole outage).
   */
  connected(): boolean;
}

export interface OverrideFollower {
  read(key: ServiceKey): Promise<ServiceOverrides>;
  write(key: ServiceKey, overrides: ServiceOverrides): Promise<void>;
  update(key: ServiceKey, change: OverrideChange, options?: OverrideUpdateOptions): Promise<ServiceOverrides>;
  watch(key: ServiceKey, listener: OverrideListener): Promise<() => void>;
  close(): void;
}

interface Followed {
  readonly listeners: Set<OverrideListener>;
  timer: NodeJS.Timeout | undefined;
  /** The last content read ('' for none); undefined before the first successful read. */
  content: string | undefined;
  /** The content whose problems were logged. */
  reported: string | undefined;
  /** A first read was sent. */
  tried: boolean;
  /** Why the last read failed (logged once per reason). */
  failure: string | undefined;
  overrides: ServiceOverrides | undefined;
  json: string | undefined;
  /** Resolvers of watch() calls waiting for the first read. */
  readonly waiting: Array<() => void>;
}

function textOf(raw: string | Uint8Array | undefined): string {
  if (raw === undefined) return '';
  return typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
}

export function createOverrideFollower(parts: OverrideFollowerParts): OverrideFollower {
  const followed = new Map<string, Followed>();
  let closed = false;

  /** Parses `content`, logging its problems once per content; undefined when malformed. */
  const check = (segment: string, content: string, state?: Followed): ServiceOverrides | undefined => {
    const result = parseOverrides(content);
    if (result.problems.length > 0 && state?.reported !== content) {
      const where = parts.location(segment);
      if (result.malformed) {
        parts.log(
          'warn',
          `skipped override record ${where}: ${result.problems[0]}; keeping the last overrides`,
        );
      } else {
        for (const problem of result.problems)
          parts.log('warn', `override record ${where}: skipped ${problem}`);
      }
    }
    if (state) state.reported = content;
    return result.malformed ? undefined : result.overrides;
  };

  const poll = async (segment: string, state: Followed): Promise<void> => {
    try {
      if (state.tried && !parts.connected()) return;
      state.tried = true;
      const content = textOf(
        (await withTimeout(parts.read(segment), parts.timeoutMs, 'override read')).value,
      );
      if (closed || followed.get(segment) !== state) return;
      state.failure = undefined;
      if (content !== state.content) {
        state.content = content;
        const overrides = check(segment, content, state) ?? state.overrides ?? emptyOverrides();
        const json = encodeOverrides(overrides);
        if (json !== state.json) {
          state.overrides = overrides;
          state.json = json;
          for (const listener of [...state.listeners]) {
            try {
              listener(overrides);
            } catch (error) {
              parts.log('error', `an override listener threw: ${(error as Error)?.message ?? error}`);
            }
          }
        }
      }
    } catch (error) {
      // an unreachable server is the registry's status to report; a server that answers but whose
      // record cannot be read (too large, not a string, not readable) is logged once per reason
      const failure = (error as Error)?.message ?? String(error);
      if (parts.connected() && failure !== state.failure && !closed) {
        parts.log(
          'warn',
          `cannot read override record ${parts.location(segment)}: ${failure}; keeping the last overrides`,
        );
      }
      state.failure = failure;
    } finally {
      for (const resolve of state.waiting.splice(0)) resolve();
      if (!closed && followed.get(segment) === state) {
        state.timer = setTimeout(() => void poll(segment, state), parts.pollMs);
      }
    }
  };

  /** The checked overrides of a stored text; throws when the record is malformed. */
  const parseStored = (segment: string, content: string): ServiceOverrides => {
    const result = parseOverrides(content);
    if (result.malformed) {
      throw new Error(`the override record ${parts.location(segment)} is malformed: ${result.problems[0]}`);
    }
    return result.overrides;
  };

  const store = {
    read: parts.read,
    write: parts.write,
    timeoutMs: parts.timeoutMs,
    location: parts.location,
  };
  const stored = (overrides: ServiceOverrides): string | undefined =>
    isEmptyOverrides(overrides) ? undefined : encodeOverrides(overrides);

  const update = async (
    key: ServiceKey,
    change: OverrideChange,
    options: OverrideUpdateOptions = {},
  ): Promise<ServiceOverrides> => {
    parts.ensureOpen('updateOverrides');
    const segment = servicePathSegment(key);
    let written = emptyOverrides();
    const next = async (content: string) => {
      written = await change(parseStored(segment, content));
      return stored(written);
    };
    await updateConfigRecord(store, segment, next, options.attempts);
    return written;
  };

  return {
    async read(key) {
      parts.ensureOpen('readOverrides');
      const segment = servicePathSegment(key);
      const raw = await withTimeout(parts.read(segment), parts.timeoutMs, 'override read');
      return parseStored(segment, textOf(raw.value));
    },
    async write(key, overrides) {
      parts.ensureOpen('writeOverrides');
      // whatever is there, a malformed record included (so that an operator can replace it)
      const value = stored(overrides);
      await updateConfigRecord(store, servicePathSegment(key), async () => value);
    },
    update,
    watch(key, listener) {
      try {
        parts.ensureOpen('watchOverrides');
      } catch (error) {
        return Promise.reject(error);
      }
      const segment = servicePathSegment(key);
      let state = followed.get(segment);
      const isNew = state === undefined;
      if (!state) {
        state = {
          listeners: new Set(),
          timer: undefined,
          content: undefined,
          reported: undefined,
          tried: false,
          failure: undefined,
          overrides: undefined,
          json: undefined,
          waiting: [],
        };
        followed.set(segment, state);
      }
      const current = state;
      current.listeners.add(listener);
      const stop = (): void => {
        current.listeners.delete(listener);
        if (current.listeners.size === 0 && followed.get(segment) === current) {
          followed.delete(segment);
          clearTimeout(current.timer);
        }
      };
      if (isNew) {
        return new Promise((resolve) => {
          current.waiting.push(() => resolve(stop));
          void poll(segment, current);
        });
      }
      if (current.overrides !== undefined) {
        const known = current.overrides;
        queueMicrotask(() => {
          if (current.listeners.has(listener)) listener(known);
        });
        return Promise.resolve(stop);
      }
      return new Promise((resolve) => current.waiting.push(() => resolve(stop)));
    },
    close() {
      closed = true;
      for (const state of followed.values()) {
        clearTimeout(state.timer);
        for (const resolve of state.waiting.splice(0)) resolve();
      }
      followed.clear();
    },
  };
}

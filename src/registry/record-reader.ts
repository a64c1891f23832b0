/**
 * Turns the stored entries of one followed provider list into records. Each entry is parsed and checked
 * (record-validation.ts) once per content: an invalid or unreadable entry is skipped with one report
 * naming it, repeated only when its content changes, and never stops the rest of the list. A record
 * without a start time keeps the time its entry was first seen, so reading the list again does not
 * change it (and warm-up applies to it).
 */
import type { ProviderRecord } from './provider-record.js';
import { MAX_RECORD_BYTES, parseProviderRecord } from './record-validation.js';

/** One entry of a provider list as an engine stores it. */
export interface StoredEntry {
  /** Where the entry is, as the engine's own tools name it: the key, node path or file. */
  readonly key: string;
  /** The stored bytes; absent when the entry could not be read, and `problem` says why. */
  readonly value?: string | Uint8Array;
  readonly problem?: string;
}

export interface RecordReader {
  /** The valid records of a full list, in entry order. */
  read(entries: Iterable<StoredEntry>): ProviderRecord[];
}

interface Known {
  /** The content it was checked with (a size marker for oversized ones, which stay invalid). */
  readonly content: string;
  readonly firstSeen: number;
  readonly record: ProviderRecord | undefined;
}

function contentOf(entry: StoredEntry): string {
  if (entry.value === undefined) return `\u0000${entry.problem ?? 'unreadable'}`;
  const size = typeof entry.value === 'string' ? Buffer.byteLength(entry.value) : entry.value.byteLength;
  if (size > MAX_RECORD_BYTES) return `\u0000${size} bytes`;
  return typeof entry.value === 'string' ? entry.value : Buffer.from(entry.value).toString('utf8');
}

/** `report` gets one line per skipped entry and content, e.g. `skipped <key>: port 70000 is not ...`. */
export function createRecordReader(
  report: (message: string) => void,
  now: () => number = Date.now,
): RecordReader {
  let known = new Map<string, Known>();
  return {
    read(entries) {
      const next = new Map<string, Known>();
      const records: ProviderRecord[] = [];
      for (const entry of entries) {
        const content = contentOf(entry);
        const previous = known.get(entry.key);
        let state = previous?.content === content ? previous : undefined;
        if (state === undefined) {
          const firstSeen = previous?.firstSeen ?? now();
          const check =
            entry.value === undefined
              ? { record: undefined, problem: entry.problem ?? 'unreadable' }
              : parseProviderRecord(entry.value, firstSeen);
          if (check.problem !== undefined) report(`skipped provider entry ${entry.key}: ${check.problem}`);
          state = { content, firstSeen, record: check.record };
        }
        next.set(entry.key, state);
        if (state.record) records.push(state.record);
      }
      known = next;
      return records;
    },
  };
}

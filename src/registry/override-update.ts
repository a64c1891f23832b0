/**
 * Compare-and-set of a segment's override record, the one write path of runtime control (the control,
 * the CLI and the dashboard change overrides through it; routing rules are meant to use it too): read
 * the record with its version, compute the next record, write it only if the record is still at that
 * version (the engine checks it on the server, registry-shell.ts `writeConfig`), and on a conflict read
 * and compute again, up to `attempts` times, waiting a jittered, growing pause in between so that two
 * writers that collided do not collide again in lockstep. When every attempt met a conflict the caller
 * gets an OverrideConflictError: a change is applied or reported, never silently lost.
 */
import { createHash, randomInt } from 'node:crypto';
import { withTimeout } from './timing.js';

/** Compare-and-set attempts of one override update by default. */
export const OVERRIDE_UPDATE_ATTEMPTS = 10;

/** The pause after the first conflict is drawn from 0..this ms, doubling per conflict up to the max. */
export const OVERRIDE_RETRY_BASE_MS = 10;

/** Upper bound of the pause between two attempts, ms. */
export const OVERRIDE_RETRY_MAX_MS = 200;

/** Every attempt of an override update met another writer's change (or lock); nothing was written. */
export class OverrideConflictError extends Error {
  override name = 'OverrideConflictError';
  constructor(
    /** Where the record is, as messages name it. */
    readonly location: string,
    readonly attempts: number,
  ) {
    super(
      `the override record ${location} was changed (or held) by another writer during each of ${attempts} attempts; this change was not applied: try again`,
    );
  }
}

/** An override record as stored, with the engine's version of it (opaque to everyone else). */
export interface StoredConfig {
  readonly value: string | Uint8Array | undefined;
  /** etcd: the key's mod revision; ZooKeeper: the node version; Redis and file: a digest of the bytes. */
  readonly version: string;
}

/** What an update needs of the engine. */
export interface ConfigStore {
  read(segment: string): Promise<StoredConfig>;
  write(segment: string, value: string | undefined, version: string): Promise<boolean>;
  readonly timeoutMs: number;
  location(segment: string): string;
}

/**
 * The version of a record for engines that keep no version of their own (Redis, file): the SHA-1 of
 * its bytes (an absent record: of nothing). Two equal contents are the same version, and that is
 * enough: the next record is computed from the content alone.
 */
export function contentDigest(bytes: Uint8Array | string): string {
  return createHash('sha1').update(bytes).digest('hex');
}

function textOf(raw: string | Uint8Array | undefined): string {
  if (raw === undefined) return '';
  return typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
}

function pause(attempt: number): Promise<void> {
  const bound = Math.min(OVERRIDE_RETRY_MAX_MS, OVERRIDE_RETRY_BASE_MS * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, randomInt(bound + 1)));
}

/**
 * Applies `next` (the stored text -> the text to store, undefined for none) to a segment's record with
 * compare-and-set, retried on conflict. Resolves with the text written (or left as it was).
 */
export async function updateConfigRecord(
  store: ConfigStore,
  segment: string,
  next: (current: string) => Promise<string | undefined>,
  attempts = OVERRIDE_UPDATE_ATTEMPTS,
): Promise<string | undefined> {
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new TypeError(`attempts must be an integer >= 1, not ${JSON.stringify(attempts)}`);
  }
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await pause(attempt - 1);
    const stored = await withTimeout(store.read(segment), store.timeoutMs, 'override read');
    const current = textOf(stored.value);
    const value = await next(current);
    // the record already says it: the read is the change's moment, nothing to write
    if ((value ?? '') === current) return value;
    const written = await withTimeout(
      store.write(segment, value, stored.version),
      store.timeoutMs,
      'override write',
    );
    if (written) return value;
  }
  throw new OverrideConflictError(store.location(segment), attempts);
}

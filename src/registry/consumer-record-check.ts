/**
 * The rules a stored consumer record must pass before an operator's tool shows it (`consumers(key)`),
 * the counterpart of record-validation.ts for provider records. Consumer records are descriptive (no
 * one connects to them), so only what identifies an entry is required:
 *
 * - a JSON object of at most `MAX_RECORD_BYTES` bytes;
 * - `service`: a non-empty string; `version` and `group`: strings when present;
 * - `host`: a host name or address (as for providers); `pid`: an integer >= 0;
 * - `application` (a string) and `startTime` (a number) fall back to '' and 0; `instance` is kept when
 *   it is 1-32 word characters or dashes; `mocks` is kept when it is an array of at most 1,000 method
 *   names (anything else: dropped, as unknown); unknown fields are ignored (and not copied).
 */

import { isMethodName } from './override-record.js';
import type { ConsumerRecord } from './provider-record.js';
import { isHostName, MAX_RECORD_BYTES } from './record-validation.js';

export type ConsumerRecordCheck =
  | { record: ConsumerRecord; problem?: undefined }
  | { record?: undefined; problem: string };

const fail = (problem: string): ConsumerRecordCheck => ({ problem });

const describe = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 40 ? `${text.slice(0, 40)}...` : text;
};

/** Checks a parsed consumer record. */
export function validateConsumerRecord(value: unknown): ConsumerRecordCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(`not a JSON object (${describe(value)})`);
  }
  const { service, version, group, host, pid, application, startTime, instance, mocks } = value as Record<
    string,
    unknown
  >;
  if (typeof service !== 'string' || service === '')
    return fail(`service ${describe(service)} is not a name`);
  if (version !== undefined && typeof version !== 'string')
    return fail(`version ${describe(version)} is not a string`);
  if (group !== undefined && typeof group !== 'string')
    return fail(`group ${describe(group)} is not a string`);
  if (typeof host !== 'string' || !isHostName(host))
    return fail(`host ${describe(host)} is not a host name or address`);
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid < 0)
    return fail(`pid ${describe(pid)} is not a process id`);
  return {
    record: {
      service,
      version: version ?? '',
      group: group ?? '',
      host,
      pid,
      application: typeof application === 'string' ? application : '',
      startTime: typeof startTime === 'number' && Number.isFinite(startTime) ? startTime : 0,
      ...(typeof instance === 'string' && /^[\w-]{1,32}$/.test(instance) ? { instance } : {}),
      ...(Array.isArray(mocks) && mocks.length <= 1_000 && mocks.every(isMethodName) ? { mocks } : {}),
    },
  };
}

/** Parses stored bytes and checks the consumer record; the problem names what is wrong. */
export function parseConsumerRecord(stored: string | Uint8Array): ConsumerRecordCheck {
  const size = typeof stored === 'string' ? Buffer.byteLength(stored) : stored.byteLength;
  if (size === 0) return fail('empty');
  if (size > MAX_RECORD_BYTES) return fail(`${size} bytes, more than ${MAX_RECORD_BYTES}`);
  let value: unknown;
  try {
    value = JSON.parse(typeof stored === 'string' ? stored : Buffer.from(stored).toString('utf8'));
  } catch (error) {
    return fail(`not JSON (${(error as Error).message})`);
  }
  return validateConsumerRecord(value);
}

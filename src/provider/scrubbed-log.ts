/** The log line of a system error a caller was not shown (provider/entry.ts scrubs it). */
import { type LogFields, traceIdOf } from '../observability/logger.js';
import type { ScrubbedError } from './entry.js';

/** `who`: `in-process`, or `for <remote>`. */
export function scrubbedLine(scrubbed: ScrubbedError, who: string): string {
  const { error, label, ref } = scrubbed;
  const fields = error as Error & {
    code?: string;
    syscall?: string;
    path?: string;
    address?: string;
    port?: number;
  };
  const where = [fields.code, fields.syscall, fields.path, fields.address, fields.port]
    .filter((part) => part !== undefined)
    .join(' ');
  return `${label} failed ${who} with a system error the caller was not shown (ref ${ref}): ${error.message}${where ? ` [${where}]` : ''}`;
}

/** The fields of a line about one call: its method, caller, reference, call id and trace id. */
export function callFields(scrubbed: ScrubbedError): LogFields {
  return {
    call: scrubbed.label,
    remote: scrubbed.remote,
    ref: scrubbed.ref,
    callId: scrubbed.callId,
    traceId: traceIdOf(scrubbed.attachments, scrubbed.callId),
  };
}

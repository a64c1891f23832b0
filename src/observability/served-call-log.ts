/**
 * The request id in every log line: a line written while a provider method runs (the app's logger,
 * from Callisto or from the method itself: `app.logger.info(…)`) that names no call gets the served
 * call's `callId` and `traceId` (core/served-call.ts; past the method's awaits when it runs in an async
 * call context, as in an app that refers services). Nothing is done per call: only per line.
 */
import { servedCall } from '../core/served-call.js';
import type { LogFields, Logger } from './logger.js';
import { traceIdOfCall } from './trace-context.js';

function withFields(fields: LogFields | undefined): LogFields | undefined {
  if (fields?.callId !== undefined) return fields;
  const served = servedCall();
  if (served === undefined) return fields;
  return {
    ...fields,
    callId: served.callId,
    traceId: fields?.traceId ?? traceIdOfCall(served.attachments, served.callId),
  };
}

/** `logger`, with the served call's fields on the lines that name none. */
export function withServedCallFields(logger: Logger): Logger {
  return {
    debug: (message, fields) => logger.debug(message, withFields(fields)),
    info: (message, fields) => logger.info(message, withFields(fields)),
    warn: (message, fields) => logger.warn(message, withFields(fields)),
    error: (message, fields) => logger.error(message, withFields(fields)),
  };
}

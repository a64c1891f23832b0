/**
 * `access-log` (provider: outermost after `shutdown`, so refusals by `auth`, `access` and the
 * limits are logged too): one line per call through the app's logger, with the caller's identity (or
 * `-` when none was established), its address, the method, the duration and the outcome (`OK` or the
 * error code), and as fields the call's id (the consumer's, docs/observability.md) and its trace id
 * when it carries one. Never the arguments, the other attachments or credentials.
 *
 *   access example.UserService.getUser caller=orders(jwt) from=127.0.0.1:53122 outcome=OK 0.41ms callId=k3j9x0a1bz-1f
 *
 * A stream is one line at its end (the chain ends with the stream), its duration the whole stream's,
 * with its kind and the messages each way (`in` from the consumer, `out` to it):
 *
 *   access example.Feed.watch caller=- from=127.0.0.1:53122 outcome=Cancelled 5012.30ms stream=server in=0 out=4800 callId=…
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { type LogFields, traceIdOf } from '../observability/logger.js';

export interface AccessLogOptions {
  /** Where lines go (the app's logger's `info`). */
  readonly write: (line: string, fields: LogFields) => void;
  /** Which services are logged; default every one this filter is given to. */
  readonly services?: ((service: string) => boolean) | undefined;
}

export function accessLogFilter(options: AccessLogOptions): NamedFilter {
  const { write, services } = options;
  const started = new WeakMap<Invocation, number>();
  return defineFilter({
    name: 'access-log',
    position: 'provider',
    order: FILTER_ORDER.provider['access-log'],
    start(invocation) {
      if (services === undefined || services(invocation.service.name)) {
        started.set(invocation, performance.now());
      }
    },
    end(invocation, error) {
      const at = started.get(invocation);
      if (at === undefined) return;
      started.delete(invocation);
      const identity = invocation.identity;
      const caller = identity === undefined ? '-' : `${identity.id}(${identity.via})`;
      const outcome = error === undefined ? 'OK' : RpcError.is(error) ? error.code : 'ProviderError';
      const stream = invocation.stream;
      const streamed =
        stream === undefined
          ? ''
          : ` stream=${stream.kind} in=${stream.messagesIn} out=${stream.messagesOut}`;
      write(
        `access ${invocation.service.name}.${invocation.method} caller=${caller} from=${invocation.remoteAddress ?? '-'} outcome=${outcome} ${(performance.now() - at).toFixed(2)}ms${streamed}`,
        { callId: invocation.callId, traceId: traceIdOf(invocation.attachments, invocation.callId) },
      );
    },
  });
}

/**
 * In-process calls (`injvm`): a consumer of the same app calls a provided service without a socket, yet
 * through the same provider filters (shutdown, deadline, admission under the provider's limits, observe,
 * the app's and the service's filters, validation) and with errors shaped as over the wire: a caller
 * cannot tell the difference, except for speed and arguments passed by reference.
 */
import { fromErrorPayload } from '../core/error-payload.js';
import type { LocalCall, LocalHandle, LocalProvider } from '../core/local-call.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import type { Admission } from '../filters/admission.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import { createProviderEntry, type ScrubbedError } from './entry.js';
import { createLocalStreamPort } from './local-stream.js';
import type { PeerSlot } from './peer-limits.js';
import { methodNotFound, methodOf, type ServiceTable } from './service-table.js';
import type { Serving } from './serving.js';

export type { LocalCall, LocalHandle } from '../core/local-call.js';

/** The provider's side of in-process calls. */
export type LocalCalls = LocalProvider;

export interface LocalCallOptions {
  readonly exposeStack: boolean;
  readonly exposeErrors: 'declared' | 'all';
  /** A handler's system error was not shown to the caller; it is logged here under `ref`. */
  onScrubbed(scrubbed: ScrubbedError): void;
}

/** What `createLocalCalls()` is built from. */
export interface LocalCallsParts {
  readonly table: ServiceTable;
  readonly serving: Serving;
  readonly options: LocalCallOptions;
}

const NOTHING_TO_CANCEL: LocalHandle = { cancel() {} };

export function createLocalCalls(parts: LocalCallsParts): LocalCalls {
  const { table, serving, options } = parts;
  let slot: PeerSlot | undefined;
  /** The in-process caller's hold on the limits, taken on first use like a connection's. */
  const admission = (): Admission => {
    if (slot !== undefined) return slot;
    const taken = serving.limits.connect('injvm');
    if (typeof taken === 'string') return { admit: () => taken, release() {} };
    slot = taken;
    return slot;
  };

  // Errors take the same shape as over the wire (entry.ts), so callers cannot tell the difference.
  const entry = createProviderEntry(
    {
      exposeStack: options.exposeStack,
      exposeErrors: options.exposeErrors,
      onScrubbed: options.onScrubbed,
    },
    {
      ended: () => serving.ended(),
      answer(invocation, value) {
        const call = invocation.origin as LocalCall;
        call.responseAttachments = invocation.answerAttachments ?? NO_ATTACHMENTS;
        call.answered(value);
      },
      fail(invocation, error) {
        const call = invocation.origin as LocalCall;
        call.responseAttachments = invocation.answerAttachments ?? NO_ATTACHMENTS;
        call.failed(fromErrorPayload(error.status, error.payload));
      },
    },
  );

  return {
    provides(key) {
      return table.lookup(key.name, key.version, key.group)?.servedOn.injvm === true;
    },
    serve(call) {
      const { service } = call;
      const exported = table.lookup(service.name, service.version, service.group);
      if (exported === undefined || !exported.servedOn.injvm) {
        call.failed(
          new RpcError('ServiceNotFound', `service ${serviceKeyString(service)} is not provided here`),
        );
        return NOTHING_TO_CANCEL;
      }
      const method = methodOf(exported, call.method);
      if (method === undefined) {
        call.failed(methodNotFound(exported, call.method));
        return NOTHING_TO_CANCEL;
      }
      if ((call.stream === undefined) !== (method.declaration.stream === undefined)) {
        const kind = method.declaration.stream;
        call.failed(
          new RpcError(
            'BadRequest',
            kind === undefined
              ? `${method.label} is not a stream method`
              : `${method.label} is a ${kind} stream: open it as a stream`,
          ),
        );
        return NOTHING_TO_CANCEL;
      }
      call.sent = true;
      const invocation = entry.call({
        method,
        attachments: { ...call.attachments },
        callId: call.callId,
        deadline: call.deadline,
        oneway: call.oneway,
        idempotent: call.idempotent,
        remoteAddress: 'injvm',
        admission: admission(),
        args: call.args as unknown[],
        origin: call,
        stream: call.stream === undefined ? undefined : createLocalStreamPort(call.stream),
      });
      return {
        cancel(reason) {
          if (invocation.answered) return;
          invocation.answered = true;
          invocation.abort(reason);
          invocation.stream?.stop(reason);
        },
      };
    },
  };
}

/**
 * In-process calls (`injvm`): a consumer of the same app calls a provided service without a socket, yet
 * through the same provider filters (shutdown, deadline, admission under the provider's limits, observe,
 * the app's and the service's filters, validation) and with errors shaped as over the wire: a caller
 * cannot tell the difference, except for speed and arguments passed by reference.
 */
import { fromErrorPayload, toErrorPayload } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import type { LocalCall, LocalHandle, LocalProvider } from '../core/local-call.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import type { Admission } from '../filters/admission.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import { type DispatchDone, dispatch } from './dispatch.js';
import type { PeerSlot } from './peer-limits.js';
import { ServerInvocation } from './server-invocation.js';
import { methodNotFound, type ServiceTable } from './service-table.js';
import type { Serving } from './serving.js';

export type { LocalCall, LocalHandle } from '../core/local-call.js';

/** The provider's side of in-process calls. */
export type LocalCalls = LocalProvider;

export interface LocalCallOptions {
  readonly exposeStack: boolean;
  readonly exposeErrors: 'declared' | 'all';
  /** A handler's system error was not shown to the caller; it is logged here under `ref`. */
  onScrubbed(label: string, ref: string, error: Error, attachments?: Attachments): void;
}

const NOTHING_TO_CANCEL: LocalHandle = { cancel() {} };

export function createLocalCalls(
  table: ServiceTable,
  serving: Serving,
  options: LocalCallOptions,
): LocalCalls {
  let slot: PeerSlot | undefined;
  /** The in-process caller's hold on the limits, taken on first use like a connection's. */
  const admission = (): Admission => {
    if (slot !== undefined) return slot;
    const taken = serving.limits.connect('injvm');
    if (typeof taken === 'string') return { admit: () => taken, release() {} };
    slot = taken;
    return slot;
  };

  const done: DispatchDone = (invocation, error, value) => {
    invocation.finish();
    serving.ended();
    const call = invocation.origin as LocalCall;
    if (invocation.answered || invocation.oneway) return;
    invocation.answered = true;
    call.responseAttachments = invocation.answerAttachments ?? NO_ATTACHMENTS;
    if (error === undefined) {
      call.answered(value);
      return;
    }
    // Errors take the same shape as over the wire, so callers cannot tell the difference.
    const { status, payload, scrubbed } = toErrorPayload(error, {
      exposeStack: options.exposeStack,
      exposure: options.exposeErrors,
      declared: invocation.declared,
      label: invocation.label,
    });
    if (scrubbed !== undefined)
      options.onScrubbed(invocation.label, scrubbed.ref, scrubbed.error, invocation.attachments);
    call.failed(fromErrorPayload(status, payload));
  };

  return {
    provides(key) {
      return table.lookup(key.name, key.version, key.group) !== undefined;
    },
    serve(call) {
      const { service } = call;
      const exported = table.lookup(service.name, service.version, service.group);
      if (exported === undefined) {
        call.failed(
          new RpcError('ServiceNotFound', `service ${serviceKeyString(service)} is not provided here`),
        );
        return NOTHING_TO_CANCEL;
      }
      const method = exported.methods.get(call.method);
      if (method === undefined) {
        call.failed(methodNotFound(exported, call.method));
        return NOTHING_TO_CANCEL;
      }
      const invocation = new ServerInvocation(
        exported.definition,
        method.name,
        method.label,
        { ...call.attachments },
        call.deadline,
        call.oneway,
        call.idempotent,
        'injvm',
        0,
        undefined,
        admission(),
        undefined,
      );
      invocation.args = call.args as unknown[];
      invocation.declared = exported.definition.errors;
      invocation.origin = call;
      call.sent = true;
      dispatch(method.chain, invocation, done);
      return {
        cancel(reason) {
          if (invocation.answered) return;
          invocation.answered = true;
          invocation.abort(reason);
        },
      };
    },
  };
}

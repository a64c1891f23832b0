/**
 * The target of in-process calls (`injvm`): the app's own provider, reached without a socket. It
 * behaves like a connection for the layers above (the cluster strategy and the per-attempt filters run
 * as over TCP): an attempt's budget is enforced by a deadline wheel, a caller's abort fails the call with
 * Cancelled (the abort reason as its cause) and cancels it on the provider, a one-way call is answered
 * once handed over, and what the provider answers, attachments included, comes back shaped as over the
 * wire (provider/local-calls.ts).
 */
import { IdTable } from '../core/id-table.js';
import type { LocalCall, LocalProvider } from '../core/local-call.js';
import { RpcError } from '../core/rpc-error.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import { createDeadlineWheel } from './deadline-wheel.js';
import type { CallTarget } from './endpoint.js';
import type { OutboundCall } from './pending-call.js';

/** One call handed to the in-process provider (the contract shared with provider/local-calls.ts). */
export type InProcessCall = LocalCall;

/** What the app's provider offers its own consumers (provider/local-calls.ts). */
export type InProcessProvider = LocalProvider;

interface Pending {
  readonly call: OutboundCall;
  cancel: ((reason: RpcError) => void) | undefined;
  onAbort: (() => void) | undefined;
}

const cancelled = (call: OutboundCall): RpcError =>
  new RpcError('Cancelled', `${call.route.label} was cancelled by the caller`, {
    cause: call.signal?.reason,
  });

export function createInProcessTarget(
  provider: InProcessProvider,
): CallTarget & { readonly inFlight: number } {
  const pending = new IdTable<Pending>();
  let nextId = 1;

  /** Takes the call `id` out of `pending`; undefined when it ended already (timed out, cancelled). */
  const settle = (id: number): Pending | undefined => {
    const entry = pending.get(id);
    if (entry === undefined) return undefined;
    pending.delete(id);
    if (entry.onAbort !== undefined) entry.call.signal!.removeEventListener('abort', entry.onAbort);
    return entry;
  };

  const wheel = createDeadlineWheel((id) => {
    const entry = settle(id);
    if (entry === undefined) return;
    const timeout = new RpcError('Timeout', `${entry.call.route.label} timed out waiting for injvm`);
    entry.cancel?.(timeout);
    entry.call.failed(timeout);
  });

  return {
    get inFlight() {
      return pending.size;
    },
    send(call) {
      if (call.signal?.aborted) {
        call.failed(cancelled(call));
        return;
      }
      const id = nextId++;
      const entry: Pending = { call, cancel: undefined, onAbort: undefined };
      if (!call.oneway) pending.set(id, entry);
      const handle = provider.serve({
        service: call.service,
        method: call.method,
        args: call.args,
        attachments: call.attachments,
        callId: call.callId,
        stream: call.stream,
        deadline: call.deadline,
        oneway: call.oneway,
        idempotent: call.idempotent,
        sent: false,
        responseAttachments: NO_ATTACHMENTS,
        answered(value) {
          if (settle(id) === undefined) return;
          call.attempt.responseAttachments = this.responseAttachments;
          call.answered(value);
        },
        failed(error) {
          // a one-way call is answered once handed over and never fails afterwards, as over the wire
          if (call.oneway || settle(id) === undefined) return;
          call.attempt.responseAttachments = this.responseAttachments;
          call.failed(error);
        },
      });
      call.attempt.sent = true;
      if (call.oneway) {
        call.answered(undefined);
        return;
      }
      if (!pending.has(id)) return; // answered already
      entry.cancel = handle.cancel;
      if (call.signal !== undefined) {
        entry.onAbort = () => {
          if (settle(id) === undefined) return;
          const error = cancelled(call);
          handle.cancel(new RpcError('Cancelled', `${call.route.label} was cancelled by the caller`));
          call.failed(error);
        };
        call.signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      if (call.attempt.timeoutMs > 0) wheel.add(id, Date.now() + call.attempt.timeoutMs);
    },
  };
}

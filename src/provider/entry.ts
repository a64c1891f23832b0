/**
 * The provider's one entry: every way a call reaches a provided method goes through here. An entry
 * adapter (the wire, server-connection.ts; in-process, local-calls.ts; HTTP/JSON, http/http-entry.ts)
 * reads its own framing, finds the method in the service table and hands this module one init object;
 * the entry builds the server invocation from it, runs the method's provider chain (dispatch.ts) and
 * shapes the outcome once — a result, a declared business error with its fields, a system error
 * scrubbed to a reference (logged through `onScrubbed`), an RpcError with its code — and gives it back
 * to the adapter's `CallEntry` to write in its own format.
 *
 * Where new things plug in: a gRPC/Triple entry over HTTP/2 is one more adapter (decode its framing,
 * call `entry.call()`, write `answer`/`fail` as gRPC status and trailers); a stream call will be one more
 * kind of `call()` whose `CallEntry` gets messages and an end, through the same chain and the same
 * error shaping. Neither copies invocation building or error shaping.
 */

import { RETRIED_ATTACHMENT, wasRetried } from '../cluster/retry-layer.js';
import type { ErrorDeclaration } from '../core/error-payload.js';
import { type ErrorExposure, type ErrorPayload, toErrorPayload } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import { dispatch } from './dispatch.js';
import { ServerInvocation, type ServerInvocationInit } from './server-invocation.js';
import type { ExportedMethod } from './service-table.js';

/** An error as the caller is shown it: its code's status and `{name, message, details}`. */
export interface ShapedError {
  readonly status: number;
  readonly payload: ErrorPayload;
}

/** A system error the caller was not shown: logged by the provider under `ref`. */
export interface ScrubbedError {
  /** The caller's address (`injvm` in-process). */
  readonly remote: string;
  /** `Service.method`, or '' for a call refused before a method was found. */
  readonly label: string;
  readonly ref: string;
  readonly error: Error;
  readonly attachments?: Attachments | undefined;
  readonly callId?: string | undefined;
}

/** How errors are shown to callers (the provider's `server.exposeStack` and `server.exposeErrors`). */
export interface ErrorShaping {
  readonly exposeStack: boolean;
  readonly exposeErrors: ErrorExposure;
  onScrubbed(scrubbed: ScrubbedError): void;
}

/** What an entry adapter does with a call the chain ran: its bookkeeping and its format. */
export interface CallEntry {
  /** The invocation exists and its chain is about to run (the adapter tracks it, e.g. for cancels). */
  began?(invocation: ServerInvocation): void;
  /** The call ended (answered or not): release what the adapter holds for it. Called before an answer. */
  ended(invocation: ServerInvocation): void;
  /** Writes a result (not called for a oneway call or one already answered). */
  answer(invocation: ServerInvocation, value: unknown): void;
  /** Writes a shaped error (not called for a oneway call or one already answered). */
  fail(invocation: ServerInvocation, error: ShapedError): void;
}

/** What a call to `shape()` knows about the call an error belongs to. */
export interface ShapeContext {
  readonly declared?: readonly ErrorDeclaration[] | undefined;
  readonly label?: string | undefined;
  readonly remote?: string | undefined;
  readonly attachments?: Attachments | undefined;
  readonly callId?: string | undefined;
}

/** A call the entry runs: the init of its invocation, with the exported method (and its chain). */
export interface EntryCallInit extends ServerInvocationInit {
  readonly method: ExportedMethod;
}

export interface ProviderEntry {
  /** Builds the call's invocation, runs its method's chain, and answers through the `CallEntry`. */
  call(init: EntryCallInit): ServerInvocation;
  /** Shapes an error for the caller (also for refusals before an invocation exists). */
  shape(error: unknown, context?: ShapeContext): ShapedError;
}

const NO_CONTEXT: ShapeContext = {};

export function createProviderEntry(shaping: ErrorShaping, entry: CallEntry): ProviderEntry {
  const shape = (error: unknown, context: ShapeContext = NO_CONTEXT): ShapedError => {
    const { status, payload, scrubbed } = toErrorPayload(error, {
      exposeStack: shaping.exposeStack,
      exposure: shaping.exposeErrors,
      declared: context.declared ?? [],
      label: context.label,
    });
    if (scrubbed !== undefined) {
      shaping.onScrubbed({
        remote: context.remote ?? '',
        label: context.label ?? '',
        ref: scrubbed.ref,
        error: scrubbed.error,
        attachments: context.attachments,
        callId: context.callId,
      });
    }
    return { status, payload };
  };

  const done = (invocation: ServerInvocation, error: unknown, value: unknown): void => {
    invocation.finish();
    entry.ended(invocation);
    if (invocation.oneway || invocation.answered) return;
    invocation.answered = true;
    if (error === undefined) entry.answer(invocation, value);
    else {
      // the failure of a call the method made, already retried there: its caller retries it no more
      if (wasRetried(error)) invocation.responseAttachments[RETRIED_ATTACHMENT] = '1';
      entry.fail(
        invocation,
        shape(error, {
          declared: invocation.declared,
          label: invocation.label,
          remote: invocation.remoteAddress,
          attachments: invocation.attachments,
          callId: invocation.callId,
        }),
      );
    }
  };

  return {
    call(init) {
      const invocation = new ServerInvocation(init);
      entry.began?.(invocation);
      dispatch(init.method.chain, invocation, done);
      return invocation;
    },
    shape,
  };
}

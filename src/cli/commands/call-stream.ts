/**
 * `callisto call … --stream server`: one server stream, each item printed as it arrives with the same
 * view as a unary result (one line per item; with --json `{"item":…}` per line), then how it ended. Ctrl-C
 * (SIGINT) cancels the stream — the iteration is left, so the provider's handler stops — and exits 130.
 */
import stringify from 'json-stringify-pretty-compact';
import { RpcError } from '../../index.js';
import type { CallTarget } from '../../tools/call-target.js';
import { CommandExit, ExitCode } from '../../tools/exit-codes.js';
import { toView } from '../../tools/json-view.js';
import { describeRpcError, exitCodeOf, rpcErrorData } from '../../tools/rpc-failure.js';
import { type CliAppOptions, openCliApp } from '../cli-app.js';
import type { Output } from '../output.js';
import { remoteStream, type TargetFlags } from '../remote-method.js';
import { formatMs } from '../time-text.js';

export interface StreamCallInit {
  readonly output: Output;
  readonly target: CallTarget;
  readonly args: unknown[];
  readonly attachments: Record<string, string>;
  /** The command line's options: where the app's configuration comes from, where the service is. */
  readonly options: CliAppOptions & TargetFlags;
}

export async function runStreamCall(init: StreamCallInit): Promise<void> {
  const { output, target, args, attachments, options } = init;
  const app = await openCliApp(options, output);
  let interrupted = false;
  let iterator: AsyncIterator<unknown> | undefined;
  const interrupt = () => {
    interrupted = true;
    // leaving the iteration cancels the stream: a pending next() ends at once
    void iterator?.return?.();
  };
  process.once('SIGINT', interrupt);
  let items = 0;
  const started = performance.now();
  try {
    const stream = remoteStream(app, target, { ...options, attachments });
    iterator = stream(args)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const step = await iterator.next();
        if (step.done === true || interrupted) break;
        items++;
        if (output.json) output.document({ item: toView(step.value) });
        else output.line(stringify(toView(step.value), { maxLength: 100 }));
      }
    } catch (error) {
      if (!RpcError.is(error)) throw error;
      const elapsedMs = performance.now() - started;
      if (output.json) {
        output.document({ ok: false, ...target, error: rpcErrorData(error), items, elapsedMs });
      } else {
        output.note(`${output.styleErr('red', 'error:')} ${describeRpcError(error)} (after ${items} items)`);
      }
      throw new CommandExit(exitCodeOf(error));
    }
    const elapsedMs = performance.now() - started;
    if (interrupted) {
      if (output.json) output.document({ ok: false, ...target, cancelled: true, items, elapsedMs });
      else output.note(`cancelled after ${items} items (${formatMs(elapsedMs)} ms)`);
      throw new CommandExit(ExitCode.Interrupted);
    }
    if (output.json) output.document({ ok: true, ...target, items, elapsedMs });
    else if (output.interactive)
      output.note(output.styleErr('dim', `(${items} items, ${formatMs(elapsedMs)} ms)`));
  } finally {
    process.off('SIGINT', interrupt);
    await app.close();
  }
}

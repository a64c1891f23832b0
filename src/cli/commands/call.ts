/** `callisto call <service>.<method> [args...]`: one real call, its result printed as JSON. */
import { Command } from 'commander';
import stringify from 'json-stringify-pretty-compact';
import { RpcError } from '../../index.js';
import { parseAttachments, parseCallArguments, parseCallTarget } from '../../tools/call-target.js';
import { CommandExit, usageError } from '../../tools/exit-codes.js';
import { toView } from '../../tools/json-view.js';
import { describeRpcError, exitCodeOf, rpcErrorData } from '../../tools/rpc-failure.js';
import { openCliApp } from '../cli-app.js';
import {
  addCommonOptions,
  addRegistryOption,
  type CommonOptions,
  collect,
  milliseconds,
} from '../options.js';
import { type CliIo, createOutput } from '../output.js';
import { CALLABLE_STREAM_KINDS, checkWhere, remoteMethod } from '../remote-method.js';
import { formatMs } from '../time-text.js';
import { runStreamCall } from './call-stream.js';

export interface TargetOptions extends CommonOptions {
  registry?: string;
  url?: string;
  serializer?: string;
  timeout?: number;
  version?: string;
  group?: string;
  attachment?: string[];
}

export interface CallOptions extends TargetOptions {
  stream?: string;
}

const EXAMPLES = `
Examples:
  $ callisto call example.UserService.getUser 7 --registry etcd://127.0.0.1:2379
  $ callisto call example.UserService.rename 7 '"Ann"' --url 127.0.0.1:20880 --attachment traceId=abc
  $ callisto call example.Clock.shift '{"$t":"D","v":"2024-05-01T12:00:00Z"}' --registry file://.callisto/registry
  $ callisto call example.UserService.getUser 7 --version 2.0.0 --group blue --timeout 500 --json
  $ callisto call example.Prices.watch '"EUR"' --stream server --url 127.0.0.1:20880

Each argument is one JSON value (quote strings: '"Ann"'). What JSON cannot say prints, and is given,
as a tagged object, the same as the HTTP entry's (docs/values.md): {"$t":"D","v":1714564800000} (or an
ISO string), {"$t":"n","v":"123"} (bigint), {"$t":"M","v":[key1, value1]}, {"$t":"S","v":[1, 2]},
{"$t":"B","v":"<base64>"}, {"$t":"u"} (undefined: a void method), {"$t":"f","v":"NaN"}.
Without the service's definition any method name is sent; the provider says whether it has it.
One attempt (no retry). On failure: the error code and message on stderr, exit 1 (3 when the registry
or the provider cannot be reached); with --json, {"ok":false,"error":{...}} on stdout.
--stream server calls a server stream method (declared stream: 'server' by the provider): each item
is printed as it arrives, one per line (with --json: {"item":...} per line, then the end as above with
"items"); --timeout bounds the whole stream (default none); Ctrl-C cancels the stream (the provider's
handler stops) and exits 130.`;

/** The options `call` and `bench` share: where the service is and how to call it. */
export function addTargetOptions(command: Command): Command {
  addRegistryOption(command, 'the registry where the providers are');
  return command
    .option('--url <host:port>', 'call this provider directly instead of asking a registry')
    .option(
      '--serializer <name>',
      'msgpack, json, v8, hessian2 or a configured one (default: consumer.serializer)',
    )
    .option('--timeout <ms>', 'call timeout (default: consumer.timeoutMs)', milliseconds)
    .option('--version <version>', 'service version', '1.0.0')
    .option('--group <group>', 'service group (default: none)')
    .option('--attachment <key=value>', 'an attachment sent with the call (repeatable)', collect);
}

export function callCommand(io: CliIo): Command {
  const command = new Command('call')
    .description('make one real call and print its result as JSON')
    .argument('<service.method>', 'e.g. example.UserService.getUser')
    .argument('[args...]', 'the arguments, one JSON value each');
  addTargetOptions(command);
  command.option(
    '--stream <kind>',
    `call a stream method of this kind (${CALLABLE_STREAM_KINDS.join(', ')}): print its items as they arrive`,
  );
  return addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((target: string, args: string[], options: CallOptions) => runCall(io, target, args, options));
}

async function runCall(io: CliIo, targetText: string, argTexts: string[], options: CallOptions) {
  const output = createOutput(io, { json: options.json ?? false });
  const target = parseCallTarget(targetText);
  const args = parseCallArguments(argTexts);
  const attachments = parseAttachments(options.attachment ?? []);
  checkWhere(options);
  if (options.stream !== undefined) {
    if (!(CALLABLE_STREAM_KINDS as readonly string[]).includes(options.stream)) {
      throw usageError(
        `--stream ${JSON.stringify(options.stream)}: the command line calls ${CALLABLE_STREAM_KINDS.join(', ')} streams (a client or two-way stream needs an input to send)`,
      );
    }
    return runStreamCall({
      output,
      target,
      args,
      attachments,
      options: { ...options, timeoutMs: options.timeout },
    });
  }
  const app = await openCliApp({ ...options, timeoutMs: options.timeout }, output);
  try {
    const call = remoteMethod(
      app,
      target,
      { ...options, timeoutMs: options.timeout, attachments },
      { oneAttempt: true },
    );
    const started = performance.now();
    let result: unknown;
    try {
      result = await call(args);
    } catch (error) {
      if (!RpcError.is(error)) throw error;
      const elapsedMs = performance.now() - started;
      if (output.json) {
        output.document({ ok: false, ...target, error: rpcErrorData(error), elapsedMs });
      } else {
        output.note(`${output.styleErr('red', 'error:')} ${describeRpcError(error)}`);
        if (error.remote && Object.keys(error.details).length > 0) {
          output.note(`details: ${JSON.stringify(toView(error.details))}`);
        }
      }
      throw new CommandExit(exitCodeOf(error));
    }
    const elapsedMs = performance.now() - started;
    if (output.json) {
      output.document({ ok: true, ...target, result: toView(result), elapsedMs });
    } else {
      output.line(stringify(toView(result), { maxLength: 100 }));
      if (output.interactive) output.note(output.styleErr('dim', `(${formatMs(elapsedMs)} ms)`));
    }
  } finally {
    await app.close();
  }
}

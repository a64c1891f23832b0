/**
 * One method of a service the command line knows only by name: a definition without declared methods
 * (so any name is sent and the provider decides), referred to through the app with the command line's
 * options. `call` makes exactly one attempt (failfast); `bench` uses the consumer configuration as an
 * application would.
 */
import { type CallistoApp, defineService, echo, type ReferenceOptions } from '../index.js';
import { ECHO_METHOD } from '../internal.js';
import type { CallTarget } from '../tools/call-target.js';
import { usageError } from '../tools/exit-codes.js';

export interface TargetFlags {
  readonly registry?: string | undefined;
  readonly url?: string | undefined;
  readonly version?: string | undefined;
  readonly group?: string | undefined;
  readonly timeoutMs?: number | undefined;
  readonly attachments?: Record<string, string> | undefined;
}

export type RemoteMethod = (args: unknown[]) => Promise<unknown>;

/** A server stream method: each iteration of what it returns opens one stream. */
export type RemoteStream = (args: unknown[]) => AsyncIterable<unknown>;

/** The stream kinds `call --stream` can make (a client stream would need an input to send). */
export const CALLABLE_STREAM_KINDS = ['server'] as const;

/** Where the calls go, for messages: `url 127.0.0.1:20880` or `registry etcd://…`. */
export function describeVia(app: CallistoApp, flags: TargetFlags): string {
  if (flags.url !== undefined) return `url ${flags.url}`;
  return `registry ${app.config.registry.join(', ')}`;
}

/** Checks that the command line says where the providers are (once, before anything is opened). */
export function checkWhere(flags: TargetFlags): void {
  if (flags.url !== undefined && flags.registry !== undefined) {
    throw usageError('give --registry <address> or --url <host:port>, not both');
  }
}

export function remoteMethod(
  app: CallistoApp,
  target: CallTarget,
  flags: TargetFlags,
  options: { oneAttempt: boolean },
): RemoteMethod {
  const reference = referTo(app, target, flags, options);
  // every provided service answers `$echo` (through its filters, not its business code)
  if (target.method === ECHO_METHOD) return (args) => echo(reference, args[0] ?? 'echo');
  const method = reference[target.method];
  if (typeof method !== 'function') {
    throw usageError(`${target.method} cannot be called remotely (a reserved name)`);
  }
  return (args) => (method as (...args: unknown[]) => Promise<unknown>)(...args);
}

/**
 * A server stream method of a service known only by name: the reference declares just that method, as
 * a server stream (the provider must declare it so too), one attempt.
 */
export function remoteStream(app: CallistoApp, target: CallTarget, flags: TargetFlags): RemoteStream {
  if (target.method === ECHO_METHOD) throw usageError(`${ECHO_METHOD} is not a stream method`);
  const reference = referTo(app, target, flags, { oneAttempt: true, stream: 'server' });
  const method = reference[target.method];
  if (typeof method !== 'function') {
    throw usageError(`${target.method} cannot be called remotely (a reserved name)`);
  }
  return (args) => (method as (...args: unknown[]) => AsyncIterable<unknown>)(...args);
}

function referTo(
  app: CallistoApp,
  target: CallTarget,
  flags: TargetFlags,
  options: { oneAttempt: boolean; stream?: 'server' },
): Record<string, unknown> {
  if (flags.url === undefined && app.config.registry.length === 0) {
    throw usageError(
      'say where the providers are: --registry <address> or --url <host:port> (or a registry in the configuration file)',
    );
  }
  const definition = defineService<Record<string, (...args: unknown[]) => Promise<unknown>>>(target.service, {
    ...(flags.version === undefined ? {} : { version: flags.version }),
    ...(flags.group === undefined ? {} : { group: flags.group }),
    // a stream's deadline is the whole stream's, the method's own: --timeout, else none
    ...(options.stream === undefined
      ? {}
      : {
          methods: {
            [target.method]: {
              stream: options.stream,
              ...(flags.timeoutMs === undefined ? {} : { timeoutMs: flags.timeoutMs }),
            },
          },
        }),
  });
  const referenceOptions: ReferenceOptions<Record<string, (...args: unknown[]) => Promise<unknown>>> = {
    ...(flags.url === undefined ? {} : { url: flags.url }),
    ...(flags.timeoutMs === undefined ? {} : { timeoutMs: flags.timeoutMs }),
    ...(flags.attachments === undefined ? {} : { attachments: flags.attachments }),
    ...(options.oneAttempt ? { cluster: 'failfast' as const } : {}),
  };
  return app.refer(definition, referenceOptions) as Record<string, unknown>;
}

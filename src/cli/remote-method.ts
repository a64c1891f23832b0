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
  if (flags.url === undefined && app.config.registry.length === 0) {
    throw usageError(
      'say where the providers are: --registry <address> or --url <host:port> (or a registry in the configuration file)',
    );
  }
  const definition = defineService<Record<string, (...args: unknown[]) => Promise<unknown>>>(target.service, {
    ...(flags.version === undefined ? {} : { version: flags.version }),
    ...(flags.group === undefined ? {} : { group: flags.group }),
  });
  const referenceOptions: ReferenceOptions<Record<string, (...args: unknown[]) => Promise<unknown>>> = {
    ...(flags.url === undefined ? {} : { url: flags.url }),
    ...(flags.timeoutMs === undefined ? {} : { timeoutMs: flags.timeoutMs }),
    ...(flags.attachments === undefined ? {} : { attachments: flags.attachments }),
    ...(options.oneAttempt ? { cluster: 'failfast' as const } : {}),
  };
  const reference = app.refer(definition, referenceOptions) as Record<string, unknown>;
  // every provided service answers `$echo` (through its filters, not its business code)
  if (target.method === ECHO_METHOD) return (args) => echo(reference, args[0] ?? 'echo');
  const method = reference[target.method];
  if (typeof method !== 'function') {
    throw usageError(`${target.method} cannot be called remotely (a reserved name)`);
  }
  return (args) => (method as (...args: unknown[]) => Promise<unknown>)(...args);
}

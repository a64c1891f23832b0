/**
 * The Callisto app a command works through, built with the public API only: configuration as an app
 * reads it (a `callisto.config.*` file in the working directory or `--config`, `CALLISTO_*` variables),
 * extensions loaded from it (user serializers and registry kinds work here too), and what the command
 * line says on top. It never listens, writes no snapshot files, and logs only with `--verbose`.
 */
import {
  type AppOptions,
  type CallistoApp,
  type CallistoConfigInput,
  ConfigError,
  callisto,
  type SerializerName,
} from '../index.js';
import { type CliError, usageError } from '../tools/exit-codes.js';
import type { CliIo, Output } from './output.js';

export interface CliAppOptions {
  /** `--config <file>`. */
  readonly config?: string | undefined;
  /** `--registry <address>`: replaces the configured registries. */
  readonly registry?: string | undefined;
  /** Several registries (`dashboard --registry a,b`): replace the configured ones. */
  readonly registries?: readonly string[] | undefined;
  /** `--serializer <name>`. */
  readonly serializer?: string | undefined;
  /** `--timeout <ms>`. */
  readonly timeoutMs?: number | undefined;
  /** `--verbose`: the app's log lines on stderr. */
  readonly verbose?: boolean | undefined;
  /** `--tls-ca`, `--tls-cert`, `--tls-key`: set over `consumer.tls` (files or PEM). */
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string } | undefined;
}

/** The name the command line announces itself with (consumer records of `call` and `bench`). */
export const CLI_APPLICATION = 'callisto-cli';

/** Options the command line sets, by the configuration key a ConfigError names. */
const FLAG_OF_KEY: Array<[RegExp, string]> = [
  [/(^|\.)registry(\[\d+\])?$/, '--registry'],
  [/(^|\.)url(\[\d+\])?$/, '--url'],
  [/(^|\.)serializer$/, '--serializer'],
  [/(^|\.)timeoutMs$/, '--timeout'],
  [/^configFile$/, '--config'],
];

/**
 * A configuration mistake as a usage error. One the command line made (its values reach the app as code)
 * names the option; one in a file or variable keeps the key and where it was set.
 */
export function configMistake(error: ConfigError): CliError {
  const fromCommandLine = error.source?.startsWith('code, ') ?? false;
  const flag = FLAG_OF_KEY.find(([pattern]) => pattern.test(error.key))?.[1];
  if (!fromCommandLine || flag === undefined) return usageError(error.message);
  const message = error.message
    .replace(`invalid configuration: ${error.key}`, `invalid ${flag}`)
    .replace(` (from ${error.source})`, '');
  return usageError(message);
}

/**
 * Which configuration file a command reads: `--config` (or `CALLISTO_CONFIG`) when given; none when the
 * command line names the registry itself, so a tool started in a provider's directory is not stopped by
 * that provider's configuration (its `server.auth` secrets, its TLS files); else the working directory's
 * `callisto.config.*`, as an app reads it.
 */
export function configFileOf(
  options: Pick<CliAppOptions, 'config' | 'registry' | 'registries'>,
  env: CliIo['env'],
): { configFile?: string | false } {
  if (options.config !== undefined) return { configFile: options.config };
  const registryGiven = options.registry !== undefined || options.registries !== undefined;
  if (registryGiven && (env['CALLISTO_CONFIG'] ?? '') === '') return { configFile: false };
  return {};
}

/** Builds the app; a configuration mistake becomes a usage error (exit 2). */
export async function openCliApp(options: CliAppOptions, output: Output): Promise<CallistoApp> {
  const consumer: CallistoConfigInput['consumer'] = { snapshotDir: '' };
  if (options.serializer !== undefined) consumer.serializer = options.serializer as SerializerName;
  if (options.timeoutMs !== undefined) consumer.timeoutMs = options.timeoutMs;
  if (options.tls !== undefined && Object.values(options.tls).some((value) => value !== undefined)) {
    consumer.tls = Object.fromEntries(Object.entries(options.tls).filter(([, value]) => value !== undefined));
  }
  const log = (level: string) => (message: string) => {
    if (options.verbose) output.note(`[callisto] ${level}: ${message}`);
  };
  const appOptions: AppOptions = {
    application: CLI_APPLICATION,
    consumer,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    ...(options.registry === undefined ? {} : { registry: [options.registry] }),
    ...(options.registries === undefined ? {} : { registry: [...options.registries] }),
    load: { env: output.io.env, ...configFileOf(options, output.io.env) },
  };
  try {
    return await callisto(appOptions);
  } catch (error) {
    if (error instanceof ConfigError) throw configMistake(error);
    throw error;
  }
}

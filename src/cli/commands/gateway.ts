/**
 * `callisto gateway --registry <address> --port <port>`: the standalone HTTP gateway (docs/http.md) in
 * the foreground, until SIGINT or SIGTERM, which close it gracefully (calls in flight are answered).
 */
import { Command } from 'commander';
import { ConfigError, createGateway } from '../../index.js';
import { usageError } from '../../tools/exit-codes.js';
import { configFileOf, configMistake, openCliApp } from '../cli-app.js';
import { addCommonOptions, addRegistryOption, type CommonOptions, integerIn } from '../options.js';
import { type CliIo, createOutput } from '../output.js';

interface GatewayCliOptions extends CommonOptions {
  registry?: string;
  port: number;
  host: string;
  maxBodyBytes?: number;
  version?: string;
  tlsKey?: string;
  tlsCert?: string;
}

const EXAMPLES = `
Examples:
  $ callisto gateway --registry etcd://127.0.0.1:2379 --port 8080
  $ callisto gateway --registry file://.callisto/registry --port 8080 --host 0.0.0.0
  $ curl -X POST -H 'content-type: application/json' -d '[7]' http://127.0.0.1:8080/example.UserService/getUser

Each request is POST /<service>/<method> with a JSON array of arguments; x-callisto-version (default
1.0.0), x-callisto-group, x-callisto-timeout-ms and x-callisto-attachment-<key> headers; the answer is
JSON in the tagged format of the json serializer, errors {"error":{"code",...}} with an HTTP status
(docs/http.md). Calls go to the providers the registry lists, load-balanced and failed over as the
configuration's consumer.* keys say. Stops gracefully on SIGINT or SIGTERM.`;

export function gatewayCommand(io: CliIo): Command {
  const command = new Command('gateway').description(
    'serve HTTP/JSON calls and route them to the providers a registry lists',
  );
  addRegistryOption(command, 'the registry where the providers are')
    .option('--port <port>', 'HTTP port (0 picks a free one)', integerIn(0, 65_535), 8080)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--max-body-bytes <bytes>', 'largest request body (default 1048576)', integerIn(16, 1 << 30))
    .option('--version <version>', 'version of requests that name none', '1.0.0')
    .option('--tls-key <file>', 'serve HTTPS: the private key (PEM file), with --tls-cert')
    .option('--tls-cert <file>', 'serve HTTPS: the certificate chain (PEM file), with --tls-key');
  return addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((options: GatewayCliOptions) => runGateway(io, options));
}

async function runGateway(io: CliIo, options: GatewayCliOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  // the configuration as every command reads it: file, CALLISTO_* variables, --registry on top
  const probe = await openCliApp(options, output);
  const registry = probe.config.registry;
  await probe.close();
  if (registry.length === 0) {
    throw usageError(
      'say where the providers are: --registry <address> (or a registry in the configuration file)',
    );
  }
  const log = (level: string) => (message: string) => {
    if (options.verbose || level === 'warn' || level === 'error')
      output.note(`[callisto] ${level}: ${message}`);
  };
  let gateway: Awaited<ReturnType<typeof createGateway>>;
  try {
    gateway = await createGateway({
      registry,
      port: options.port,
      host: options.host,
      defaultVersion: options.version ?? '1.0.0',
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
      ...(options.tlsKey === undefined && options.tlsCert === undefined
        ? {}
        : { tls: { key: options.tlsKey ?? '', cert: options.tlsCert ?? '' } }),
      app: {
        application: 'callisto-gateway',
        logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
        load: { env: io.env, ...configFileOf(options, io.env) },
      },
    });
  } catch (error) {
    if (error instanceof ConfigError) throw configMistake(error);
    throw error;
  }
  const url = `${options.tlsKey === undefined ? 'http' : 'https'}://${gateway.host}:${gateway.port}`;
  if (output.json) output.document({ url, host: gateway.host, port: gateway.port, registry });
  else output.line(`gateway listening on ${url} (registry ${registry.join(', ')})`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  output.note('closing the gateway');
  await gateway.close();
}

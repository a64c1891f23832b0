/** `callisto dashboard --registry <address>[,<address>…]`: serves the web dashboard (src/dashboard/). */
import { Command } from 'commander';
import { createDashboard, DashboardOptionError, DEFAULT_DASHBOARD_OPTIONS } from '../../dashboard/index.js';
import { redactAddress, splitAddressList } from '../../internal.js';
import { usageError } from '../../tools/exit-codes.js';
import { openCliApp } from '../cli-app.js';
import { addCommonOptions, collect, integerIn, milliseconds } from '../options.js';
import { type CliIo, createOutput } from '../output.js';

interface DashboardCommandOptions {
  registry?: string;
  port: number;
  host: string;
  token?: string;
  adminToken?: string;
  refresh?: number;
  allowedHost?: string[];
  adminAllow?: string[];
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  readOnly?: boolean;
  config?: string;
  json?: boolean;
  verbose?: boolean;
}

const EXAMPLES = `
Examples:
  $ callisto dashboard --registry etcd://127.0.0.1:2379
  $ callisto dashboard --registry file://.callisto/registry --port 8080
  $ callisto dashboard --registry etcd://10.0.0.5:2379,zookeeper://10.0.0.6:2181 --host 0.0.0.0 --token "$(openssl rand -hex 16)"

  $ callisto dashboard --registry etcd://10.0.0.5:2379 --host 0.0.0.0 --allowed-host dash.example.com \
      --tls-cert dash.crt --tls-key dash.key --token "$(openssl rand -hex 16)"

Open the address it prints in a browser. With --token, the page asks for the token once (or open the
printed address with #token=… at its end); every request of the page carries it. The dashboard
listens on 127.0.0.1 unless --host says otherwise; beyond loopback it needs --tls-cert, --tls-key and
--token (with --read-only: --token, or client certificates with --tls-ca). It answers only to loopback
names and addresses (and IP addresses when beyond loopback): give --allowed-host for a DNS name it is
opened by. Changes are accepted only from its own page (or with the token). Live figures and each
provider's configuration come from the providers' admin endpoints (admin: { port } in their
configuration), asked only on the host of the provider's record or as --admin-allow says;
--admin-token is sent to them when they need one. docs/dashboard.md, "Security". Stops on Ctrl-C.`;

/** The command line's flag for a dashboard option named in an error. */
const FLAGS: Record<string, string> = {
  'tls.key': '--tls-key',
  'tls.cert': '--tls-cert',
  'tls.ca': '--tls-ca',
  allowedHosts: '--allowed-host',
  adminAllow: '--admin-allow',
  refreshMs: '--refresh',
};
const flagOf = (option: string) => FLAGS[option] ?? `--${option}`;

export function dashboardCommand(io: CliIo): Command {
  const command = new Command('dashboard')
    .description('serve the web dashboard: services, providers, live figures, actions, calls')
    .option(
      '--registry <address>',
      'the registries to show, comma-separated (file://dir, etcd://host:2379, zookeeper://host:2181, redis://host:6379; default: the configured ones)',
    )
    .option(
      '--port <n>',
      'port of the page (0: a free one)',
      integerIn(0, 65_535),
      DEFAULT_DASHBOARD_OPTIONS.port,
    )
    .option('--host <host>', 'address to listen on', DEFAULT_DASHBOARD_OPTIONS.host)
    .option('--token <token>', 'require this token (8 characters or more) from the page')
    .option('--admin-token <token>', "token for the providers' admin endpoints")
    .option('--refresh <ms>', 'how often registries and provider figures are read', milliseconds)
    .option(
      '--allowed-host <host>',
      'a host name the page may be opened by besides loopback (host or host:port; repeatable)',
      collect,
    )
    .option(
      '--admin-allow <host[:port]>',
      "admin endpoints to ask besides those on the provider record's own host (repeatable)",
      collect,
    )
    .option('--tls-cert <file|pem>', 'serve HTTPS with this certificate chain (with --tls-key)')
    .option('--tls-key <file|pem>', 'the private key of --tls-cert')
    .option('--tls-ca <file|pem>', 'require client certificates signed by these CAs (with --tls-cert)')
    .option('--read-only', 'show only: no actions and no Try it');
  return addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((options: DashboardCommandOptions) => runDashboard(io, options));
}

async function runDashboard(io: CliIo, options: DashboardCommandOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  const registries = options.registry === undefined ? undefined : splitAddressList(options.registry);
  if (registries !== undefined && registries.length === 0) throw usageError('--registry names no address');
  const app = await openCliApp({ ...options, registries }, output);
  try {
    const addresses = app.config.registry;
    if (addresses.length === 0) {
      throw usageError(
        'which registries? give --registry <address>[,<address>…] (e.g. etcd://127.0.0.1:2379)',
      );
    }
    let dashboard: Awaited<ReturnType<typeof createDashboard>>;
    try {
      dashboard = await createDashboard(
        {
          registries: addresses,
          host: options.host,
          port: options.port,
          token: options.token,
          adminToken: options.adminToken,
          ...(options.refresh === undefined ? {} : { refreshMs: options.refresh }),
          allowedHosts: options.allowedHost ?? [],
          adminAllow: options.adminAllow ?? [],
          readOnly: options.readOnly ?? false,
          ...(options.tlsCert === undefined && options.tlsKey === undefined && options.tlsCa === undefined
            ? {}
            : { tls: { cert: options.tlsCert ?? '', key: options.tlsKey ?? '', ca: options.tlsCa } }),
        },
        { app, log: (message) => output.warn(message) },
      );
    } catch (error) {
      if (error instanceof DashboardOptionError)
        throw usageError(error.message.replace(`dashboard option ${error.option}`, flagOf(error.option)));
      if (/is in use/.test((error as Error).message)) throw usageError((error as Error).message);
      throw error;
    }
    const open = options.token === undefined ? dashboard.url : `${dashboard.url}#token=${options.token}`;
    const shown = addresses.map(redactAddress);
    if (output.json) output.document({ url: dashboard.url, registries: shown });
    else {
      output.line(`dashboard on ${dashboard.url} (registries: ${shown.join(', ')})`);
      output.line(`open ${open} in a browser; Ctrl-C stops it`);
    }
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await dashboard.close();
  } finally {
    await app.close();
  }
}

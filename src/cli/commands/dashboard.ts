/** `callisto dashboard --registry <address>[,<address>…]`: serves the web dashboard (src/dashboard/). */
import { Command } from 'commander';
import { splitAddressList } from '../../config/address-list.js';
import { createDashboard, DashboardOptionError, DEFAULT_DASHBOARD_OPTIONS } from '../../dashboard/index.js';
import { openCliApp } from '../cli-app.js';
import { usageError } from '../exit-codes.js';
import { addCommonOptions, integerIn, milliseconds } from '../options.js';
import { type CliIo, createOutput } from '../output.js';

interface DashboardCommandOptions {
  registry?: string;
  port: number;
  host: string;
  token?: string;
  adminToken?: string;
  refresh?: number;
  config?: string;
  json?: boolean;
  verbose?: boolean;
}

const EXAMPLES = `
Examples:
  $ callisto dashboard --registry etcd://127.0.0.1:2379
  $ callisto dashboard --registry file://.callisto/registry --port 8080
  $ callisto dashboard --registry etcd://10.0.0.5:2379,zookeeper://10.0.0.6:2181 --host 0.0.0.0 --token "$(openssl rand -hex 16)"

Open the address it prints in a browser. With --token, the page asks for the token once (or open the
printed address with #token=… at its end); every request of the page carries it. Without a token, the
dashboard listens on 127.0.0.1 only unless --host says otherwise: anyone who can reach the port can
disable providers. Live figures and each provider's configuration come from the providers' admin
endpoints (admin: { port } in their configuration); --admin-token is sent to them when they need one.
Stops on Ctrl-C.`;

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
    .option('--refresh <ms>', 'how often registries and provider figures are read', milliseconds);
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
        },
        { app, log: (message) => output.warn(message) },
      );
    } catch (error) {
      if (error instanceof DashboardOptionError)
        throw usageError(error.message.replace('dashboard option ', '--'));
      if (/is in use/.test((error as Error).message)) throw usageError((error as Error).message);
      throw error;
    }
    const open = options.token === undefined ? dashboard.url : `${dashboard.url}#token=${options.token}`;
    if (output.json) output.document({ url: dashboard.url, registries: addresses });
    else {
      output.line(`dashboard on ${dashboard.url} (registries: ${addresses.join(', ')})`);
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

/**
 * `callisto doctor --registry <address>`: is the registry reachable, is its layout readable (bad records
 * reported as its readers log them), do the providers it lists answer a heartbeat (a real connection
 * and a ping to each, with the round trip), and are there consumers waiting for a provider that is not
 * there. Says what is wrong in plain words; exit 1 when something is, 3 when the registry is unreachable.
 * A provider whose record says TLS is probed over TLS with the consumer's TLS options (`consumer.tls`
 * from the configuration, or `--tls-ca`, `--tls-cert`, `--tls-key` over it), as a consumer would call it.
 */
import fs from 'node:fs';
import { Command } from 'commander';
import type { CallistoApp, ServiceKey } from '../../index.js';
import { noClientTlsMessage } from '../../internal.js';
import type { ProviderRecord, ServiceListing } from '../../registry/index.js';
import { CliError, CommandExit, ExitCode, usageError } from '../../tools/exit-codes.js';
import { openCliApp } from '../cli-app.js';
import { probeEcho } from '../echo-probe.js';
import { type ProbeTls, probeProvider } from '../heartbeat-probe.js';
import { addCommonOptions, addRegistryOption, type CommonOptions, milliseconds } from '../options.js';
import { type CliIo, createOutput, type Output } from '../output.js';
import { probeTlsOf, servesTls } from '../probe-target.js';
import { type OpenedRegistry, openRegistry, registryAddressOf } from '../registry-connection.js';
import { type KeyView, keyLabel, listServices, readKey } from '../registry-view.js';
import { formatMs } from '../time-text.js';

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

interface DoctorOptions extends CommonOptions {
  registry?: string;
  timeout: number;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
}

/** Service keys read at most (each is one read of its providers and one of its consumers). */
export const DOCTOR_MAX_KEYS = 1_000;
/** Heartbeat probes in flight at once. */
const PROBE_CONCURRENCY = 16;
/** `$echo` calls made at most (one per service on each provider that answered its heartbeat). */
export const DOCTOR_MAX_ECHOES = 200;

const EXAMPLES = `
Examples:
  $ callisto doctor --registry etcd://127.0.0.1:2379
  $ callisto doctor --registry file://.callisto/registry --timeout 2000 --json
  $ callisto doctor --registry etcd://127.0.0.1:2379 --tls-ca ca.pem --tls-cert me.pem --tls-key me-key.pem

Checks, in order: the registry answers within --timeout; its layout can be read (records that fail the
checks are reported as its readers log them); every provider it lists accepts a connection and answers
a heartbeat within --timeout (the round trip is shown; over TLS, verified with consumer.tls or the
--tls-* options, for a provider whose record says TLS); every service on it answers its $echo (a real
call through the provider's filters, not its business code; refused by auth still counts as there);
no service has consumers but no provider.
Exit 0 when all is well, 1 when something is wrong, 3 when the registry cannot be reached.`;

interface Check {
  readonly ok: boolean;
  readonly check: 'registry' | 'layout' | 'record' | 'consumers' | 'provider' | 'echo';
  readonly message: string;
  readonly [extra: string]: unknown;
}

export function doctorCommand(io: CliIo): Command {
  const command = new Command('doctor').description(
    'check a registry and the providers it lists, and say what is wrong',
  );
  addRegistryOption(command, 'the registry to check').option(
    '--timeout <ms>',
    'how long the registry, and each provider, may take to answer',
    milliseconds,
    5_000,
  );
  command
    .option(
      '--tls-ca <file>',
      "CA certificates that sign TLS providers' certificates (default: consumer.tls.ca)",
    )
    .option(
      '--tls-cert <file>',
      'a client certificate, for providers that ask for one (default: consumer.tls.cert)',
    )
    .option('--tls-key <file>', 'the private key of --tls-cert (default: consumer.tls.key)');
  return addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((options: DoctorOptions) => runDoctor(io, options));
}

async function runDoctor(io: CliIo, options: DoctorOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  checkReadable({ '--tls-ca': options.tlsCa, '--tls-cert': options.tlsCert, '--tls-key': options.tlsKey });
  const app = await openCliApp(
    { ...options, tls: { ca: options.tlsCa, cert: options.tlsCert, key: options.tlsKey } },
    output,
  );
  const checks: Check[] = [];
  const address = registryAddressOf(app);
  const report = (check: Check) => {
    checks.push(check);
    if (!output.json) printCheck(output, check);
  };
  try {
    // callisto() checked consumer.tls already (unreadable files, a key without its certificate)
    const clientTls = probeTlsOf(app.config.consumer.tls);
    if (!output.json) output.line(`doctor: ${address}`);
    const warnings: string[] = [];
    let opened: OpenedRegistry;
    try {
      opened = await openRegistry(app, address, options.timeout, (message) => warnings.push(message));
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      report({ ok: false, check: 'registry', message: error.message });
      finish(output, address, checks);
      throw new CommandExit(error.exitCode);
    }
    try {
      report({
        ok: true,
        check: 'registry',
        message: `registry ${opened.location} reachable, connected in ${formatMs(opened.connectedInMs)} ms`,
      });
      const views = await readLayout(opened, report, warnings);
      if (views) await checkProviders(views, { timeoutMs: options.timeout, tls: clientTls, app }, report);
    } finally {
      await opened.registry.close();
    }
  } finally {
    await app.close();
  }
  const problems = finish(output, address, checks);
  if (problems > 0) throw new CommandExit(ExitCode.Failed);
}

/** Reads every service key; reports the layout, the skipped records and consumers without providers. */
async function readLayout(
  opened: OpenedRegistry,
  report: (check: Check) => void,
  warnings: string[],
): Promise<KeyView[] | undefined> {
  const { registry, location } = opened;
  let services: ServiceListing[];
  const views: KeyView[] = [];
  try {
    services = await listServices(registry, location);
    for (const key of services.slice(0, DOCTOR_MAX_KEYS)) views.push(await readKey(registry, key));
  } catch (error) {
    report({
      ok: false,
      check: 'layout',
      message: `cannot read the layout of ${location}: ${(error as Error).message}`,
    });
    return undefined;
  }
  const entries = (kind: 'providers' | 'consumers') => services.reduce((sum, s) => sum + s[kind], 0);
  const skipped = services.length > DOCTOR_MAX_KEYS ? ` (checked the first ${DOCTOR_MAX_KEYS})` : '';
  report({
    ok: true,
    check: 'layout',
    message: `layout readable: ${count(services.length, 'service key')}${skipped}, ${count(entries('providers'), 'provider entry', 'provider entries')}, ${count(entries('consumers'), 'consumer entry', 'consumer entries')}`,
  });
  for (const warning of warnings.splice(0)) {
    report({ ok: false, check: 'record', message: `bad record, skipped by every consumer: ${warning}` });
  }
  for (const view of views) {
    if (view.providers.length === 0 && view.consumers.length > 0) {
      report({
        ok: false,
        check: 'consumers',
        message: `${keyLabel(view.key)}: ${count(view.consumers.length, 'consumer')} (${view.consumers.map((c) => c.application || c.host).join(', ')}) and no provider: their calls fail with NoProvider`,
        service: view.key,
      });
    }
  }
  return views;
}

/** Each file given to an option can be read (a usage error naming the option otherwise). */
function checkReadable(files: Record<string, string | undefined>): void {
  for (const [flag, file] of Object.entries(files)) {
    if (file === undefined) continue;
    try {
      fs.accessSync(file, fs.constants.R_OK);
    } catch (error) {
      throw usageError(
        `${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
}

interface ProbeSettings {
  readonly timeoutMs: number;
  readonly tls: ProbeTls | undefined;
  /** The app the `$echo` calls are made through. */
  readonly app: CallistoApp;
}

/** Probes every provider address once (a few at a time) and reports each. */
async function checkProviders(views: KeyView[], settings: ProbeSettings, report: (check: Check) => void) {
  const { timeoutMs } = settings;
  const byAddress = new Map<string, { record: ProviderRecord; services: string[]; keys: ServiceKey[] }>();
  for (const view of views) {
    for (const record of view.providers) {
      const address = `${servesTls(record) ? 'tls://' : ''}${record.host}:${record.port}`;
      const entry = byAddress.get(address) ?? { record, services: [], keys: [] };
      entry.services.push(keyLabel(view.key));
      entry.keys.push(view.key);
      byAddress.set(address, entry);
    }
  }
  const queue = [...byAddress.entries()];
  const results = new Map<string, Check[]>();
  let echoes = 0;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [address, { record, services, keys }] = next;
      const who = `${services.join(', ')}; ${record.application || 'application ?'}, pid ${record.pid || '?'}`;
      const overTls = servesTls(record);
      if (overTls && settings.tls === undefined) {
        const problem = `${noClientTlsMessage(record.host, record.port)} (or pass --tls-ca <file>)`;
        results.set(address, [
          { ok: false, check: 'provider', address, message: `${address} (${who}): ${problem}` },
        ]);
        continue;
      }
      const result = await probeProvider(
        { host: record.host, port: record.port, tls: overTls ? settings.tls : undefined },
        timeoutMs,
      );
      if (!result.ok) {
        results.set(address, [
          { ok: false, check: 'provider', address, message: `${address} (${who}): ${result.problem}` },
        ]);
        continue;
      }
      const checks: Check[] = [
        {
          ok: true,
          check: 'provider',
          address,
          rttMs: result.rttMs,
          connectMs: result.connectMs,
          message: `${address} answered a heartbeat in ${formatMs(result.rttMs)} ms (${who})`,
        },
      ];
      for (const key of keys) {
        if (echoes >= DOCTOR_MAX_ECHOES) break;
        echoes += 1;
        const label = keyLabel(key);
        const echoed = await probeEcho({ app: settings.app, key, url: address, timeoutMs });
        checks.push(
          echoed.answered
            ? {
                ok: true,
                check: 'echo',
                address,
                service: key,
                ms: echoed.ms,
                message: `${label} at ${address} answered $echo in ${formatMs(echoed.ms)} ms${echoed.refused === undefined ? '' : ` (through its filters, which refused this caller: ${echoed.refused})`}`,
              }
            : {
                ok: false,
                check: 'echo',
                address,
                service: key,
                message: `${label} at ${address} does not answer $echo: ${echoed.problem}`,
              },
        );
      }
      results.set(address, checks);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, queue.length) }, worker));
  for (const address of byAddress.keys()) for (const check of results.get(address)!) report(check);
}

function printCheck(output: Output, check: Check): void {
  const mark = check.ok ? output.style('green', 'ok  ') : output.style('red', 'FAIL');
  output.line(`  ${mark}  ${check.message}`);
}

/** Prints the summary (or the JSON document); returns the number of problems. */
function finish(output: Output, address: string, checks: Check[]): number {
  const problems = checks.filter((c) => !c.ok).length;
  if (output.json) {
    output.document({ ok: problems === 0, registry: address, problems, checks });
  } else {
    output.line(
      problems === 0
        ? output.style('green', 'everything looks fine')
        : output.style('red', `${problems} problem${problems === 1 ? '' : 's'} found`),
    );
  }
  return problems;
}

/** `callisto ls [service] --registry <address>`: what a registry holds. */
import { Command } from 'commander';
import type { ProviderRecord, ServiceListing, ServiceOverrides } from '../../registry/index.js';
import { CliError, ExitCode, unreachableError } from '../../tools/exit-codes.js';
import { similarNames } from '../../tools/similar-names.js';
import { openCliApp } from '../cli-app.js';
import { describeOverrides } from '../control-run.js';
import { type ProbeTls, probeProvider } from '../heartbeat-probe.js';
import { addCommonOptions, addRegistryOption, type CommonOptions, milliseconds } from '../options.js';
import { type CliIo, createOutput, type Output } from '../output.js';
import { probeTlsOf, servesTls } from '../probe-target.js';
import { openRegistry, registryAddressOf } from '../registry-connection.js';
import { type KeyView, keyLabel, listServices, readKey } from '../registry-view.js';
import { formatTable } from '../table.js';
import { formatAge, formatTime } from '../time-text.js';

interface LsOptions extends CommonOptions {
  registry?: string;
  load?: boolean;
  version?: string;
  group?: string;
  timeout: number;
}

const EXAMPLES = `
Examples:
  $ callisto ls --registry etcd://127.0.0.1:2379
  $ callisto ls example.UserService --registry file://.callisto/registry
  $ callisto ls example.UserService --version 1.0.0 --registry zookeeper://127.0.0.1:2181 --json

A provider's state is "disabled" while an override disables it (or the service), "warming" while it is
younger than consumer.warmupMs (its weight still ramps up), else "serving"; an overridden weight shows
beside the registered one. callisto overrides ls lists every override.`;

export function lsCommand(io: CliIo): Command {
  const command = new Command('ls')
    .description('list the services a registry holds, or the providers and consumers of one service')
    .argument('[service]', 'a service name, e.g. example.UserService');
  addRegistryOption(command, 'the registry to read')
    .option('--version <version>', 'with a service: only this version')
    .option('--group <group>', 'with a service: only this group')
    .option(
      '--load',
      'with a service: ask each provider for its load (a heartbeat: its calls in flight, adaptive limit, event-loop delay, calls queued for worker threads, whether it is overloaded)',
    )
    .option('--timeout <ms>', 'how long the registry may take to connect and answer', milliseconds, 5_000);
  return addCommonOptions(command)
    .addHelpText('after', EXAMPLES)
    .action((service: string | undefined, options: LsOptions) => runLs(io, service, options));
}

async function runLs(io: CliIo, service: string | undefined, options: LsOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  const app = await openCliApp(options, output);
  try {
    const opened = await openRegistry(app, registryAddressOf(app), options.timeout, (m) => output.warn(m));
    const { registry, location } = opened;
    const reading = async <T>(what: Promise<T>): Promise<T> => {
      try {
        return await what;
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw unreachableError(`cannot read the registry ${location}: ${(error as Error).message}`);
      }
    };
    try {
      const services = await reading(listServices(registry, location));
      if (service === undefined) return printServices(output, location, services);
      const keys = selectKeys(services, service, options, location);
      const views: KeyView[] = [];
      for (const key of keys) views.push(await reading(readKey(registry, key, true)));
      const loads = options.load
        ? await probeLoads(views, probeTlsOf(app.config.consumer.tls), options.timeout)
        : undefined;
      printService(output, { location, service, views, warmupMs: app.config.consumer.warmupMs, loads });
    } finally {
      await registry.close();
    }
  } finally {
    await app.close();
  }
}

function selectKeys(
  services: ServiceListing[],
  name: string,
  options: LsOptions,
  location: string,
): ServiceListing[] {
  const named = services.filter((s) => s.name === name);
  if (named.length === 0) {
    const similar = similarNames(name, new Set(services.map((s) => s.name)));
    const hint = similar.length > 0 ? `; did you mean ${similar.join(' or ')}?` : '';
    throw new CliError(ExitCode.Failed, `nothing registered for ${name} at ${location}${hint}`);
  }
  const keys = named.filter(
    (s) =>
      (options.version === undefined || s.version === options.version) &&
      (options.group === undefined || s.group === options.group),
  );
  if (keys.length === 0) {
    const held = named.map((s) => `${s.version}${s.group ? ` (group ${s.group})` : ''}`).join(', ');
    const wanted = [
      options.version && `version ${options.version}`,
      options.group !== undefined && `group "${options.group}"`,
    ]
      .filter(Boolean)
      .join(', ');
    throw new CliError(ExitCode.Failed, `${name} has no ${wanted} at ${location} (registered: ${held})`);
  }
  return keys;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function printServices(output: Output, location: string, services: ServiceListing[]): void {
  if (output.json) {
    output.document({ registry: location, services });
    return;
  }
  const providers = services.reduce((sum, s) => sum + s.providers, 0);
  const consumers = services.reduce((sum, s) => sum + s.consumers, 0);
  const names = new Set(services.map((s) => s.name)).size;
  if (services.length === 0) {
    output.line(`${location} holds no service`);
    return;
  }
  output.line(
    `${location}: ${plural(names, 'service')}, ${plural(providers, 'provider')}, ${plural(consumers, 'consumer')}`,
  );
  const header = ['SERVICE', 'VERSION', 'GROUP', 'PROVIDERS', 'CONSUMERS'].map((h) =>
    output.style('bold', h),
  );
  const rows = services.map((s) => [
    s.name,
    s.version,
    s.group || '-',
    s.providers === 0 ? output.style('red', '0') : String(s.providers),
    String(s.consumers),
  ]);
  for (const line of formatTable(header, rows)) output.line(line);
}

/**
 * `disabled` when an override says so (the service or this provider), else `serving`, or `warming`
 * while younger than the consumers' warm-up.
 */
export function providerState(
  record: ProviderRecord,
  warmupMs: number,
  now = Date.now(),
  overrides?: ServiceOverrides,
): string {
  if (overrides?.disabled || overrides?.disabledProviders.includes(`${record.host}:${record.port}`)) {
    return 'disabled';
  }
  return warmupMs > 0 && now - record.startTime < warmupMs ? 'warming' : 'serving';
}

/** The weight consumers use: an override's, shown beside the registered one. */
function weightText(record: ProviderRecord, overrides: ServiceOverrides | undefined): string {
  const override = overrides?.weights[`${record.host}:${record.port}`];
  return override === undefined ? String(record.weight) : `${override} (registered ${record.weight})`;
}

/** What `--load` found per provider address: its report, or why there is none. */
type LoadFinding = { readonly load: LoadView } | { readonly problem: string };

interface LoadView {
  inflight: number;
  limit: number;
  queued: number;
  loopDelayMs: number;
  overloaded: boolean;
}

function parseLoadText(text: string): LoadView | undefined {
  const [inflight, limit, queued, delay, overloaded] = text.split(',').map(Number);
  if (![inflight, limit, queued, delay].every((n) => n !== undefined && Number.isFinite(n))) return undefined;
  return {
    inflight: inflight!,
    limit: limit!,
    queued: queued!,
    loopDelayMs: delay!,
    overloaded: overloaded === 1,
  };
}

/** One heartbeat to every provider (a few at once), for the load report its pong carries. */
async function probeLoads(
  views: KeyView[],
  secure: ProbeTls | undefined,
  timeoutMs: number,
): Promise<Map<string, LoadFinding>> {
  const records = new Map<string, ProviderRecord>();
  for (const view of views)
    for (const record of view.providers) records.set(`${record.host}:${record.port}`, record);
  const found = new Map<string, LoadFinding>();
  const queue = [...records];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const [address, record] = next;
      if (servesTls(record) && secure === undefined) {
        found.set(address, { problem: 'serves TLS only: configure consumer.tls' });
        continue;
      }
      const result = await probeProvider(
        { host: record.host, port: record.port, tls: servesTls(record) ? secure : undefined },
        timeoutMs,
      );
      const load = result.ok && result.load !== undefined ? parseLoadText(result.load) : undefined;
      found.set(
        address,
        load !== undefined
          ? { load }
          : {
              problem: result.ok
                ? 'reports no load (an older provider, or server.loadReportMs 0)'
                : result.problem,
            },
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return found;
}

function loadText(finding: LoadFinding | undefined): string {
  if (finding === undefined) return '-';
  if ('problem' in finding) return '?';
  const { load } = finding;
  return `${load.inflight}/${load.limit}${load.overloaded ? ' overloaded' : ''}`;
}

interface ServicePrintout {
  location: string;
  service: string;
  views: KeyView[];
  warmupMs: number;
  loads?: Map<string, LoadFinding>;
}

function printService(output: Output, listing: ServicePrintout): void {
  const { location, service, views, warmupMs, loads } = listing;
  const now = Date.now();
  if (output.json) {
    output.document({
      registry: location,
      service,
      keys: views.map(({ key, providers, consumers, overrides }) => ({
        version: key.version,
        group: key.group,
        providers: providers.map((record) => ({
          address: `${record.host}:${record.port}`,
          state: providerState(record, warmupMs, now, overrides),
          effectiveWeight: overrides?.weights[`${record.host}:${record.port}`] ?? record.weight,
          ...record,
          ...(loads === undefined ? {} : { load: loads.get(`${record.host}:${record.port}`) ?? null }),
        })),
        consumers,
        overrides: overrides ?? null,
      })),
    });
    return;
  }
  output.line(location);
  for (const { key, providers, consumers, overrides } of views) {
    output.line(
      `${output.style('bold', keyLabel(key))}: ${plural(providers.length, 'provider')}, ${plural(consumers.length, 'consumer')}`,
    );
    if (providers.length > 0) {
      const header = ['ADDRESS', 'WEIGHT', 'STATE', 'STARTED', 'UP', 'APPLICATION', 'PID'];
      if (loads !== undefined) header.push('IN FLIGHT/LIMIT', 'LOOP DELAY', 'QUEUED');
      const rows = providers.map((record) => {
        const state = providerState(record, warmupMs, now, overrides);
        const color = state === 'serving' ? 'green' : state === 'disabled' ? 'red' : 'yellow';
        const row = [
          `${record.host}:${record.port}`,
          weightText(record, overrides),
          output.style(color, state),
          formatTime(record.startTime),
          formatAge(now - record.startTime),
          record.application || '-',
          String(record.pid || '-'),
        ];
        if (loads !== undefined) {
          const finding = loads.get(`${record.host}:${record.port}`);
          const load = finding !== undefined && 'load' in finding ? finding.load : undefined;
          row.push(
            loadText(finding),
            load === undefined ? '-' : `${load.loopDelayMs} ms`,
            load === undefined ? '-' : String(load.queued),
          );
        }
        return row;
      });
      output.line('  providers');
      for (const line of formatTable(
        header.map((h) => output.style('dim', h)),
        rows,
        '    ',
      ))
        output.line(line);
    }
    const overridden = overrides === undefined ? [] : describeOverrides(overrides);
    if (overridden.length > 0) {
      output.line(`  overrides: ${overridden.join('; ')} (callisto overrides clear removes them)`);
    }
    if (consumers.length > 0) {
      const header = ['HOST', 'PID', 'APPLICATION', 'STARTED'];
      const rows = consumers.map((record) => [
        record.host,
        String(record.pid),
        record.application || '-',
        formatTime(record.startTime),
      ]);
      output.line('  consumers');
      for (const line of formatTable(
        header.map((h) => output.style('dim', h)),
        rows,
        '    ',
      ))
        output.line(line);
    }
  }
}

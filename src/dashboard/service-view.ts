/**
 * What the API answers, assembled from the registry watch, the stats feed, the admin endpoints and the
 * overrides: the list of services, one service's page, the providers' configuration.
 */

import type { ServiceKey } from '../index.js';
import { type ProviderRecord, withoutToken } from '../registry/index.js';
import { similarNames } from '../tools/similar-names.js';
import type { Actions } from './actions.js';
import type { AdminGate } from './admin-gate.js';
import { HttpError } from './http-basics.js';
import type { RegistryWatch, WatchedKey } from './registry-watch.js';
import { type AdminReader, type MethodDeclaration, parseServices, type ServiceOverrides } from './sources.js';
import type { KeyFigures, StatsFeed } from './stats-feed.js';

/** How long a provider's method declarations (`/services`) are kept before being read again, ms. */
const DECLARATIONS_MS = 10_000;

export const METRICS_NEED_ADMIN =
  'metrics need admin endpoints: enable `admin` on providers (admin: { enabled: true } in their configuration)';
export const CONFIG_NEEDS_ADMIN =
  'the configuration needs admin endpoints: enable `admin` on providers (admin: { enabled: true } in their configuration)';

export interface ViewContext {
  readonly watch: RegistryWatch;
  readonly stats: StatsFeed;
  readonly admin: AdminReader;
  /** Which admin endpoints may be asked (admin-gate.ts). */
  readonly gate: AdminGate;
  readonly actions: Actions;
  /** Consumers' warm-up, ms: a provider younger than this is `warming`. */
  readonly warmupMs: number;
}

const addressOf = (record: ProviderRecord) => `${record.host}:${record.port}`;

/** A key's providers across its registries, one per address (the first registry's record wins). */
export function providersOf(watched: WatchedKey): Array<ProviderRecord & { registries: string[] }> {
  const byAddress = new Map<string, ProviderRecord & { registries: string[] }>();
  for (const list of watched.lists) {
    for (const record of list.providers ?? []) {
      const known = byAddress.get(addressOf(record));
      if (known) known.registries.push(list.registry);
      // a registry token is never shown
      else byAddress.set(addressOf(record), { ...withoutToken(record), registries: [list.registry] });
    }
  }
  return [...byAddress.values()].sort((a, b) => addressOf(a).localeCompare(addressOf(b)));
}

export function overview(context: ViewContext) {
  const services = context.watch.keys().map((watched) => {
    const followed = watched.lists.every((list) => list.providers !== undefined);
    const providers = followed
      ? providersOf(watched).length
      : Math.max(...watched.lists.map((list) => list.listing.providers));
    const consumers = watched.lists.reduce((sum, list) => sum + list.listing.consumers, 0);
    return {
      name: watched.key.name,
      version: watched.key.version,
      group: watched.key.group,
      providers,
      consumers,
      registries: watched.lists.map((list) => list.registry),
      health: providers > 0 ? 'ok' : 'no-providers',
    };
  });
  return {
    time: Date.now(),
    registries: context.watch.registries(),
    services,
  };
}

export function keysNamed(
  context: ViewContext,
  name: string,
  version?: string,
  group?: string,
): WatchedKey[] {
  const all = context.watch.keys();
  const named = all.filter((watched) => watched.key.name === name);
  if (named.length === 0) {
    const similar = similarNames(name, new Set(all.map((watched) => watched.key.name)));
    const hint = similar.length > 0 ? `; did you mean ${similar.join(' or ')}?` : '';
    throw new HttpError(404, `no service named "${name}" in the registries${hint}`);
  }
  const keys = named.filter(
    (watched) =>
      (version === undefined || watched.key.version === version) &&
      (group === undefined || watched.key.group === group),
  );
  if (keys.length === 0) {
    throw new HttpError(
      404,
      `${name} has no version ${version ?? '*'} group "${group ?? '*'}" in the registries`,
    );
  }
  return keys;
}

function providerState(
  record: ProviderRecord,
  overrides: ServiceOverrides | undefined,
  warmupMs: number,
  now: number,
): string {
  const address = addressOf(record);
  if (overrides?.disabled || overrides?.disabledProviders.includes(address)) return 'disabled';
  if (warmupMs > 0 && now - record.startTime < warmupMs) return 'warming';
  return 'healthy';
}

export function createDeclarations(admin: AdminReader, gate: AdminGate) {
  const cache = new Map<string, { time: number; methods: Promise<Map<string, MethodDeclaration[]>> }>();
  return async (
    key: ServiceKey,
    providers: readonly ProviderRecord[],
  ): Promise<MethodDeclaration[] | undefined> => {
    for (const record of providers) {
      const verdict = gate.of(record);
      if (verdict.kind !== 'ok') continue;
      const address = verdict.address;
      const id = `${address.host}|${address.port}`;
      let cached = cache.get(id);
      if (!cached || Date.now() - cached.time > DECLARATIONS_MS) {
        const methods = admin.read(address, '/services').then((data) => {
          const byKey = new Map<string, MethodDeclaration[]>();
          for (const service of parseServices(data)) {
            if (service.side !== 'provider') continue;
            byKey.set(`${service.service}|${service.version}|${service.group}`, service.methods);
          }
          return byKey;
        });
        cached = { time: Date.now(), methods };
        cache.set(id, cached);
        if (cache.size > 1000) cache.delete(cache.keys().next().value!);
      }
      try {
        const found = (await cached.methods).get(`${key.name}|${key.version}|${key.group}`);
        if (found) return found;
      } catch {
        cache.delete(id);
      }
    }
    return undefined;
  };
}

type Declarations = ReturnType<typeof createDeclarations>;

export async function serviceView(
  context: ViewContext,
  declarations: Declarations,
  name: string,
  version?: string,
  group?: string,
) {
  const now = Date.now();
  const keys = await Promise.all(
    keysNamed(context, name, version, group).map(async (watched) => {
      const { key } = watched;
      const registries = watched.lists.map((list) => list.registry);
      const providers = providersOf(watched);
      let overrides: ServiceOverrides | undefined;
      let controlError: string | undefined;
      try {
        overrides = await context.actions.overrides(key, registries);
      } catch (error) {
        controlError = `cannot read the overrides: ${(error as Error).message}`;
      }
      const figures: KeyFigures = context.stats.figures(key, providers);
      const declared = await declarations(key, providers);
      const names = new Set<string>();
      for (const record of providers) for (const method of record.methods) names.add(method);
      for (const method of figures.methods) names.add(method.method);
      for (const method of declared ?? []) names.add(method.name);
      const methods = [...names].sort().map((method) => {
        const declaration = declared?.find((d) => d.name === method);
        const live = figures.methods.find((m) => m.method === method);
        return {
          name: method,
          ...(declaration === undefined ? {} : { declaration }),
          mock: overrides?.mocks[method] ?? 'off',
          ...(live === undefined ? {} : { figures: live }),
        };
      });
      const consumers = await context.watch.consumers(key);
      return {
        version: key.version,
        group: key.group,
        registries,
        providers: providers.map((record) => {
          const address = addressOf(record);
          const override = overrides?.weights[address];
          return {
            address,
            host: record.host,
            port: record.port,
            weight: override ?? record.weight,
            registeredWeight: record.weight,
            application: record.application,
            pid: record.pid,
            startTime: record.startTime,
            state: providerState(record, overrides, context.warmupMs, now),
            registries: record.registries,
            admin: context.gate.of(record).kind !== 'none',
            ...(figures.providers[address] === undefined ? {} : { figures: figures.providers[address] }),
            ...(figures.errors[address] === undefined ? {} : { adminError: figures.errors[address] }),
          };
        }),
        consumers: consumers.records,
        ...(consumers.errors.length > 0 ? { consumersError: consumers.errors.join('; ') } : {}),
        methods,
        declarations: declared === undefined ? 'unknown' : 'known',
        metrics: {
          reporting: figures.reporting,
          withoutAdmin: figures.withoutAdmin,
          ...(figures.reporting === 0 && providers.length > 0 ? { waiting: METRICS_NEED_ADMIN } : {}),
        },
        disabled: overrides?.disabled ?? false,
        // the routing rules in force (docs/routing.md), in the order stored
        routes: overrides?.routes ?? [],
        control: controlError === undefined ? {} : { error: controlError },
      };
    }),
  );
  return { time: now, name, keys };
}

/** Each provider's `/config` (read at once, each within the admin timeout), one entry per address. */
export async function configView(context: ViewContext, name: string, version?: string, group?: string) {
  const records = new Map<string, ProviderRecord>();
  for (const watched of keysNamed(context, name, version, group)) {
    for (const record of providersOf(watched)) {
      if (!records.has(addressOf(record))) records.set(addressOf(record), record);
    }
  }
  const providers = await Promise.all(
    [...records].map(async ([address, record]) => {
      const head = { address, application: record.application };
      const verdict = context.gate.of(record);
      if (verdict.kind === 'none') return { ...head, error: CONFIG_NEEDS_ADMIN };
      if (verdict.kind === 'refused') return { ...head, error: verdict.reason };
      try {
        return { ...head, config: await context.admin.read(verdict.address, '/config') };
      } catch (error) {
        return { ...head, error: (error as Error).message };
      }
    }),
  );
  return { name, providers };
}

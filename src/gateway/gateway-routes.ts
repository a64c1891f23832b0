/**
 * What the gateway can route to: one entry per service key (name, version, group) with providers in the
 * registry, holding a consumer reference (load balancing, failover, outlier detection: the app's
 * consumer) and the methods the providers' records declare. An entry is made on the first request for
 * its key, after the registry showed at least one provider: a name nobody provides costs one registry
 * lookup and leaves nothing behind, and the methods a reference is asked for are only declared ones,
 * so what the gateway keeps is bounded by what is registered (and by `maxServices`).
 */

import type { CallistoApp } from '../app/callisto-app.js';
import { appInternals } from '../app/internals.js';
import { RpcError } from '../core/rpc-error.js';
import { type ServiceKey, serviceKeyString } from '../core/service-key.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import { defineService } from '../service/define-service.js';

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

export interface GatewayRoute {
  readonly key: ServiceKey;
  /** The methods the providers declare now (the union over the registry's records). */
  readonly methods: ReadonlySet<string>;
  readonly reference: Readonly<Record<string, AnyMethod>>;
}

export interface GatewayRoutes {
  /** The route of `key`, or an RpcError: ServiceNotFound (nothing registered), Overloaded (bounds). */
  route(key: ServiceKey): Promise<GatewayRoute>;
  close(): void;
}

export interface GatewayRouteLimits {
  /** Service keys routed at once. */
  readonly maxServices: number;
  /** Registry lookups of new keys at once. */
  readonly maxPendingLookups: number;
}

export function createGatewayRoutes(app: CallistoApp, limits: GatewayRouteLimits): GatewayRoutes {
  const routes = new Map<string, Promise<GatewayRoute>>();
  const unsubscribes: Array<() => void> = [];
  let pending = 0;
  let closed = false;

  const lookup = async (key: ServiceKey): Promise<GatewayRoute> => {
    const registries = await appInternals(app).registries.get(app.config.registry);
    const lists = new Map<number, ProviderRecord[]>();
    const methods = new Set<string>();
    const update = (): void => {
      methods.clear();
      for (const list of lists.values())
        for (const record of list) for (const m of record.methods) methods.add(m);
    };
    const mine: Array<() => void> = [];
    await Promise.all(
      registries.map(async (registry, index) => {
        const unsubscribe = await registry.subscribe(key, (list) => {
          lists.set(index, list);
          update();
        });
        mine.push(unsubscribe);
      }),
    );
    const registered = [...lists.values()].some((list) => list.length > 0);
    if (!registered || closed) {
      for (const unsubscribe of mine) unsubscribe();
      throw new RpcError('ServiceNotFound', `no provider of ${serviceKeyString(key)} is registered`);
    }
    unsubscribes.push(...mine);
    const definition = defineService<Record<string, AnyMethod>>(key.name, {
      version: key.version,
      group: key.group,
    });
    return { key, methods, reference: app.refer(definition) as Record<string, AnyMethod> };
  };

  return {
    route(key) {
      const id = serviceKeyString(key);
      const known = routes.get(id);
      if (known !== undefined) return known;
      if (routes.size >= limits.maxServices) {
        return Promise.reject(
          new RpcError(
            'Overloaded',
            `the gateway routes at most ${limits.maxServices} services (maxServices)`,
          ),
        );
      }
      if (pending >= limits.maxPendingLookups) {
        return Promise.reject(
          new RpcError('Overloaded', `too many registry lookups at once (${limits.maxPendingLookups})`),
        );
      }
      pending++;
      const made = lookup(key).finally(() => pending--);
      routes.set(id, made);
      // only services that exist are kept
      made.catch(() => routes.delete(id));
      return made;
    },
    close() {
      closed = true;
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
    },
  };
}

/**
 * The overrides part of a registry-fed directory (runtime control, docs/governance.md): follows the
 * service's override record on every registry that has one and hands the directory their merge
 * (override-record.ts `mergeOverrides`) whenever one changes. The first reads are awaited, bounded by
 * `startTimeoutMs`, so a consumer that starts while a provider is disabled never routes a call to it.
 */
import type { ServiceKey } from '../core/service-key.js';
import { mergeOverrides, type ServiceOverrides } from '../registry/override-record.js';
import type { Registry } from '../registry/registry.js';

export interface OverrideFeed {
  /** Resolves after the first read of every registry (or `startTimeoutMs`). */
  readonly ready: Promise<void>;
  close(): void;
}

export function followOverrides(
  key: ServiceKey,
  registries: readonly Registry[],
  apply: (overrides: ServiceOverrides) => void,
  startTimeoutMs: number,
  log: (message: string) => void,
): OverrideFeed {
  const following = registries.filter((registry) => registry.watchOverrides !== undefined);
  const latest = new Map<Registry, ServiceOverrides>();
  const stops: Array<() => void> = [];
  let closed = false;
  const merged = (): ServiceOverrides => mergeOverrides(following.flatMap((r) => latest.get(r) ?? []));
  const started = following.map(async (registry) => {
    try {
      const stop = await registry.watchOverrides!(key, (overrides) => {
        if (closed) return;
        latest.set(registry, overrides);
        apply(merged());
      });
      if (closed) stop();
      else stops.push(stop);
    } catch (error) {
      if (!closed)
        log(`cannot follow the overrides of ${key.name} on ${registry.kind}: ${(error as Error).message}`);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, startTimeoutMs);
  });
  const ready = Promise.race([Promise.all(started).then(() => {}), bound]).finally(() => clearTimeout(timer));
  return {
    ready,
    close() {
      closed = true;
      for (const stop of stops.splice(0)) stop();
    },
  };
}

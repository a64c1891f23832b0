/**
 * Why a consumer has no provider of a service, in words a user can act on: each registry asked (for
 * `file://` the resolved directory, so a consumer started elsewhere sees the path it really reads), its
 * state, and what it holds under the service's name, so that a version mismatch ("registered versions:
 * 1.0.0"), a group mismatch ("groups: a, b"), another directory ("nothing registered for ...") and a
 * broken registry ("disconnected: ...") read differently.
 *
 * What the registries hold is looked up only when an explanation is wanted (a NoProvider error is being
 * built, or the first list is empty), at most once per `minIntervalMs`; never per call.
 */
import type { ServiceKey } from '../core/service-key.js';
import type { Registry, ServiceHolding } from './registry.js';
import { describeRegistry, isFailing } from './registry-description.js';
import { describeError } from './timing.js';

export interface AbsenceExplainerOptions {
  key: ServiceKey;
  /** The registries asked (may change once they are opened). */
  registries: () => readonly Registry[];
  /** What the consumer's own view adds, e.g. "no registry has delivered a list yet". */
  state?: () => string | undefined;
  /** Fewest ms between two lookups of what the registries hold. Default 5000. */
  minIntervalMs?: number;
  /** A refresh resolves after this long even if a registry has not answered. Default 1000. */
  timeoutMs?: number;
}

export interface Absence {
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export interface AbsenceExplainer {
  /** The explanation as known now; starts a lookup of what the registries hold when one is due. */
  explain(): Absence;
  /** Looks up what the registries hold (rate-limited); resolves when done, or after `timeoutMs`. */
  refresh(): Promise<void>;
}

type Lookup = { holdings: ServiceHolding[] } | { error: string };

const list = (values: string[]): string => [...new Set(values)].sort().join(', ');
const groupName = (group: string): string => (group === '' ? '(no group)' : group);

/** What `holdings` says about `key`, relative to what was asked. */
function describeHoldings(key: ServiceKey, holdings: ServiceHolding[]): string {
  const present = holdings.filter((h) => h.providers > 0);
  const exact = present.find((h) => h.version === key.version && h.group === key.group);
  if (exact) {
    return `holds ${exact.providers} entr${exact.providers === 1 ? 'y' : 'ies'} for it, none usable (invalid ones are logged when read; those of dead providers expire)`;
  }
  if (present.length === 0) return `nothing registered for ${key.name}`;
  const parts: string[] = [];
  const versions = present.filter((h) => h.group === key.group).map((h) => h.version);
  if (versions.length > 0) parts.push(`registered versions: ${list(versions)}`);
  const groups = present.filter((h) => h.version === key.version).map((h) => groupName(h.group));
  if (groups.length > 0) parts.push(`groups: ${list(groups)}`);
  const others = present
    .filter((h) => h.group !== key.group && h.version !== key.version)
    .map((h) => `${h.version} in ${groupName(h.group)}`);
  if (others.length > 0) parts.push(`also: ${list(others)}`);
  return parts.join('; ');
}

export function createAbsenceExplainer(options: AbsenceExplainerOptions): AbsenceExplainer {
  const { key } = options;
  const minIntervalMs = options.minIntervalMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const lookups = new WeakMap<Registry, Lookup>();
  let lastRefresh = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> = Promise.resolve();

  const lookup = async (registry: Registry): Promise<void> => {
    if (registry.inventory === undefined || isFailing(registry)) return;
    try {
      lookups.set(registry, { holdings: await registry.inventory(key.name) });
    } catch (error) {
      lookups.set(registry, { error: describeError(error) });
    }
  };

  const refresh = (): Promise<void> => {
    const now = Date.now();
    if (now - lastRefresh < minIntervalMs) return refreshing;
    lastRefresh = now;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    const done = Promise.all(options.registries().map(lookup)).then(() => {});
    refreshing = Promise.race([done, bound]).finally(() => clearTimeout(timer));
    return refreshing;
  };

  const contents = (registry: Registry): string => {
    if (isFailing(registry)) return 'contents unknown';
    const found = lookups.get(registry);
    if (found === undefined) {
      return registry.inventory === undefined ? 'cannot list its contents' : 'contents not looked up yet';
    }
    return 'error' in found ? `contents unknown (${found.error})` : describeHoldings(key, found.holdings);
  };

  return {
    explain() {
      void refresh();
      const registries = options.registries();
      const state = options.state?.();
      const parts = registries.map((registry) => `${describeRegistry(registry)}: ${contents(registry)}`);
      const asked = registries.length === 0 ? 'no registry opened yet' : `asked ${parts.join('; ')}`;
      return {
        message: `${asked}${state ? ` (${state})` : ''}`,
        details: {
          service: key.name,
          version: key.version,
          group: key.group,
          registries: registries.map((registry) => {
            const found = lookups.get(registry);
            return {
              location: registry.location ?? registry.kind,
              status: registry.status,
              lastError: registry.lastError,
              holdings: found && 'holdings' in found ? found.holdings : undefined,
            };
          }),
        },
      };
    },
    refresh,
  };
}

/**
 * A directory's view of the operator's overrides of its service (runtime control, docs/governance.md):
 * which endpoints are disabled (left out of selection; their calls in flight finish), the weights that
 * replace the records' ones, and the mock switches by method. An override naming an address that is
 * not among the service's providers is logged once and has no effect until such a provider appears.
 */
import type { ServiceKey } from '../core/service-key.js';
import type { MockMode, ServiceOverrides } from '../registry/override-record.js';
import type { ProviderEndpoint } from './endpoint.js';

export interface DirectoryOverrides {
  /** New overrides from the source. */
  set(overrides: ServiceOverrides): void;
  /**
   * Applies the overrides to `endpoints` (weights) and returns the routable ones (the same array when
   * none is disabled). `listChanged`: called for a new provider list (unknown addresses are checked).
   */
  apply(endpoints: readonly ProviderEndpoint[], listChanged: boolean): readonly ProviderEndpoint[];
  isDisabled(endpoint: ProviderEndpoint): boolean;
  /** Why no provider is routable although some are listed, when overrides are the reason. */
  whyNone(): { message: string; details: Record<string, unknown> } | undefined;
  readonly current: ServiceOverrides | undefined;
  readonly mocks: ReadonlyMap<string, MockMode> | undefined;
}

function hostPort(endpoint: ProviderEndpoint): string {
  return `${endpoint.host}:${endpoint.port}`;
}

export function createDirectoryOverrides(
  key: ServiceKey,
  log: (level: 'info' | 'warn' | 'error', message: string) => void,
): DirectoryOverrides {
  let current: ServiceOverrides | undefined;
  let disabled: ReadonlySet<string> = new Set();
  let mocks: ReadonlyMap<string, MockMode> | undefined;
  let listKnown = false;
  /** Addresses already reported as unknown under the current overrides. */
  let reported = new Set<string>();

  const reportUnknown = (endpoints: readonly ProviderEndpoint[]): void => {
    if (current === undefined || !listKnown) return;
    const known = new Set(endpoints.map(hostPort));
    const named = [...current.disabledProviders, ...Object.keys(current.weights)];
    for (const address of named) {
      if (known.has(address) || reported.has(address)) continue;
      reported.add(address);
      log(
        'warn',
        `override of ${key.name}: provider ${address} is not among its providers; skipped until it registers`,
      );
    }
  };

  return {
    set(overrides) {
      current = overrides;
      disabled = new Set(overrides.disabledProviders);
      const methods = Object.entries(overrides.mocks);
      mocks = methods.length > 0 ? new Map(methods) : undefined;
      reported = new Set();
    },
    apply(endpoints, listChanged) {
      if (listChanged) listKnown = true;
      for (const endpoint of endpoints) {
        const weight = current?.weights[hostPort(endpoint)];
        endpoint.weight = weight ?? endpoint.record?.weight ?? endpoint.weight;
      }
      reportUnknown(endpoints);
      if (current === undefined) return endpoints;
      if (current.disabled) return [];
      if (disabled.size === 0) return endpoints;
      const routable = endpoints.filter((endpoint) => !disabled.has(hostPort(endpoint)));
      return routable.length === endpoints.length ? endpoints : routable;
    },
    isDisabled(endpoint) {
      return current !== undefined && (current.disabled || disabled.has(hostPort(endpoint)));
    },
    whyNone() {
      if (current === undefined) return undefined;
      const details = { service: key.name, version: key.version, group: key.group };
      if (current.disabled) {
        return {
          message: 'the service is disabled by an operator (runtime control; `callisto enable` restores it)',
          details: { ...details, disabled: true },
        };
      }
      if (disabled.size === 0) return undefined;
      return {
        message: `every provider is disabled by an operator (${[...disabled].join(', ')})`,
        details: { ...details, disabledProviders: [...disabled] },
      };
    },
    get current() {
      return current;
    },
    get mocks() {
      return mocks;
    },
  };
}

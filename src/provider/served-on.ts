/**
 * Where one provided service is served and registered (`provide(…, { scope, protocols, registries })`):
 * the entries that answer it (service-table.ts `ServedOn`), the protocols its record announces and the
 * registries it is registered in. A `local` or `none` service is registered nowhere. Mistakes are
 * ConfigErrors naming the key (check-provide-options.ts checked the shapes).
 */
import { ConfigError } from '../core/config-error.js';
import { closestMatch } from '../core/did-you-mean.js';
import { PROVIDE_PROTOCOLS, type ProvideOptions, type ProvideProtocol } from './provide-options.js';
import type { ServedOn } from './service-table.js';

export interface Served {
  readonly on: ServedOn;
  /** The remote entries it is on, as its record says. */
  readonly protocols: readonly ProvideProtocol[];
  /** The registries it is registered in (none for `local` and `none`). */
  readonly registries: readonly string[];
}

export interface ServedContext {
  readonly service: string;
  /** The app's `registry` addresses. */
  readonly appRegistries: readonly string[];
  /** Whether the server has an HTTP/JSON entry (`server.http`). */
  readonly http: boolean;
  /** Whether the server has a gRPC entry (`server.grpc`). */
  readonly grpc: boolean;
}

export function servedOf(options: ProvideOptions, context: ServedContext): Served {
  const source = `code, provide(${context.service}) options`;
  const scope = options.scope ?? 'both';
  const entries = PROVIDE_PROTOCOLS.filter(
    (protocol) => (protocol !== 'http' || context.http) && (protocol !== 'grpc' || context.grpc),
  );
  const protocols = options.protocols ?? entries;
  if (protocols.includes('http') && !context.http) {
    throw new ConfigError(
      'protocols',
      protocols,
      "entries the server has: 'callisto' (set server.http for 'http')",
      {
        source,
        problem: 'the app has no HTTP/JSON entry (server.http)',
      },
    );
  }
  if (protocols.includes('grpc') && !context.grpc) {
    throw new ConfigError('protocols', protocols, 'entries the server has (server.grpc.enabled is false)', {
      source,
      problem: 'the app has no gRPC entry (server.grpc.enabled: false)',
    });
  }
  const remote = scope === 'remote' || scope === 'both';
  const registries = options.registries ?? context.appRegistries;
  registries.forEach((registry, i) => {
    if (context.appRegistries.includes(registry)) return;
    const closest = closestMatch(registry, [...context.appRegistries]);
    throw new ConfigError(
      `registries[${i}]`,
      registry,
      context.appRegistries.length === 0
        ? 'none: the app has no registry (set registry)'
        : `one of the app's registries: ${context.appRegistries.join(', ')}`,
      { source, suggestion: closest },
    );
  });
  return {
    on: {
      injvm: scope === 'local' || scope === 'both',
      callisto: remote && protocols.includes('callisto'),
      http: remote && protocols.includes('http'),
      grpc: remote && protocols.includes('grpc'),
    },
    protocols: remote ? [...new Set(protocols)] : [],
    registries: remote ? [...new Set(registries)] : [],
  };
}

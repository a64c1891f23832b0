/**
 * Where a reference's providers come from, checked when the reference is made: its `url` addresses,
 * else its own `registry`, else the app's registries. Without any of them only a service the app
 * provides itself (in-process, `injvm`) can answer; otherwise there is nothing to call, which is a
 * configuration mistake reported by `refer()`, not a NoProvider at the first call.
 */

import { splitAddressList } from '../core/address-list.js';
import { ConfigError } from '../core/config-error.js';
import { closestMatch } from '../core/did-you-mean.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { checkRegistryAddressFor } from '../registry/check-registry-address.js';
import type { ServiceDefinition } from '../service/define-service.js';
import { parseDirectAddress } from './directory-feed.js';
import { isGrpcTransport } from './grpc-connection.js';
import { isHttpTransport } from './http-connection.js';
import type { ReferenceOptions } from './reference-options.js';
import { checkReferenceProtocol, type ReferenceProtocol } from './reference-protocol.js';

/** The provider addresses or the registries of a reference. */
export interface ReferenceTargets {
  /** Direct provider addresses, when the reference names some. */
  readonly urls: readonly string[] | undefined;
  /** Registry addresses otherwise (the reference's own, else the app's); may be empty for in-process. */
  readonly registries: readonly string[];
  /** What the reference calls through: the RPC port (`callisto`), the HTTP entry (`http`), gRPC (`grpc`). */
  readonly protocol: ReferenceProtocol;
}

export interface TargetContext {
  readonly extensions: ExtensionRegistry;
  /** The app's `registry` addresses. */
  readonly appRegistries: readonly string[];
  /** Whether in-process calls are on and the app provides this service now. */
  readonly inProcess: { injvm: boolean; provided: boolean };
}

const listOf = (value: string | string[] | undefined, split: (text: string) => string[]) =>
  typeof value === 'string' ? split(value) : value;

/** Checks and resolves the targets of `refer(definition, options)`; throws a ConfigError naming the key. */
export function resolveReferenceTargets(
  definition: ServiceDefinition<unknown>,
  options: ReferenceOptions<unknown>,
  context: TargetContext,
): ReferenceTargets {
  const label = `refer(${definition.name})`;
  const source = `code, ${label} options`;
  const indexed = (key: string, value: unknown, i: number) =>
    typeof value === 'string' ? key : `${key}[${i}]`;
  const listed = listOf(options.url, (text) => text.split(',').map((part) => part.trim()));
  const protocol = checkReferenceProtocol(label, options.protocol ?? protocolOfUrls(listed));
  // over HTTP, `host:port` is the provider's HTTP port
  const urls = protocol === 'http' ? listed?.map(httpAddress) : listed;
  urls?.forEach((url, i) => {
    const key = indexed(`${label}.url`, options.url, i);
    let transport: string;
    if (protocol === 'grpc') {
      checkGrpcAddress(url, { key, source, raw: listed![i]! });
      return;
    }
    if (protocol === 'http') {
      let scheme: string | undefined;
      try {
        scheme = parseDirectAddress(url).transport;
      } catch (error) {
        throw new ConfigError(
          key,
          listed![i],
          'http://host:port, https://host:port or host:port (the HTTP port)',
          {
            source,
            cause: error,
          },
        );
      }
      if (!isHttpTransport(scheme)) {
        throw new ConfigError(
          key,
          listed![i],
          'http://host:port, https://host:port or host:port (the HTTP port)',
          {
            source,
            problem: `protocol: 'http' calls the provider's HTTP entry; ${scheme}:// is an address of its RPC port`,
          },
        );
      }
      return;
    }
    try {
      transport = parseDirectAddress(url).transport;
    } catch (error) {
      throw new ConfigError(key, url, 'host:port or callisto://host:port', { source, cause: error });
    }
    if (!context.extensions.has('transport', transport)) {
      const names = context.extensions.names('transport');
      const closest = closestMatch(transport, names);
      throw new ConfigError(
        key,
        url,
        `<transport>://host:port with a registered transport: ${names.join(', ')}`,
        {
          source,
          problem: `unknown transport "${transport}"`,
          suggestion: closest === undefined ? undefined : url.trim().replace(/^[^:]+/, closest),
        },
      );
    }
  });
  const own = listOf(options.registry, splitAddressList);
  own?.forEach((address, i) => {
    checkRegistryAddressFor(context.extensions, address, {
      key: indexed(`${label}.registry`, options.registry, i),
      source,
    });
  });
  const registries = own ?? context.appRegistries;
  const { injvm, provided } = context.inProcess;
  // an HTTP (gRPC) reference calls the HTTP entry (a gRPC server), even of a service the app provides itself
  if (!urls?.length && registries.length === 0 && !(injvm && provided && protocol === 'callisto')) {
    throw new ConfigError(`${label}.url`, undefined, 'a provider address (url), a registry, or mock: true', {
      source,
      problem: `nothing to call: the app has no registry and ${injvm ? `does not provide ${definition.name} itself` : 'injvm is off'}`,
    });
  }
  return { urls: urls?.length ? urls : undefined, registries, protocol };
}

/** `grpc` when every address of `url` is a gRPC one (`grpc://`, `grpcs://`): such a reference needs no `protocol`. */
function protocolOfUrls(urls: readonly string[] | undefined): ReferenceProtocol | undefined {
  if (urls === undefined || urls.length === 0) return undefined;
  return urls.every((url) => /^grpcs?:\/\//.test(url.trim())) ? 'grpc' : undefined;
}

/** A direct address of a gRPC reference: `grpc://host:port` or `grpcs://host:port`, else a ConfigError. */
function checkGrpcAddress(url: string, where: { key: string; source: string; raw: string }): void {
  const expected = 'grpc://host:port or grpcs://host:port (a gRPC server; grpcs over TLS)';
  let scheme: string;
  try {
    scheme = parseDirectAddress(url).transport;
  } catch (error) {
    throw new ConfigError(where.key, where.raw, expected, { source: where.source, cause: error });
  }
  if (!isGrpcTransport(scheme)) {
    throw new ConfigError(where.key, where.raw, expected, {
      source: where.source,
      problem: `protocol: 'grpc' calls gRPC servers; ${/^[a-z][a-z0-9-]*:\/\//.test(url.trim()) ? `${scheme}://` : 'host:port without a scheme'} is not one`,
    });
  }
}

/** A direct address of an HTTP reference: `host:port` is `http://host:port`. */
function httpAddress(url: string): string {
  return /^[a-z][a-z0-9-]*:\/\//.test(url.trim()) ? url : `http://${url.trim()}`;
}

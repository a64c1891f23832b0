/**
 * Parsing registry addresses, once, at the edge: `etcd://h1:2379,h2:2379?ttl=5000`, `zookeeper://h:2181`,
 * `redis://h:6379`, `redis-sentinel://s1:26379,s2:26379/mymaster`, `file://<dir>`, `direct://h:p,h:p`.
 */
import { RpcError } from '../core/rpc-error.js';
import { redactAddress } from '../security/redact.js';
import type { RegistryAddress } from './registry.js';

/** Default ports of the built-in server kinds, used when an address names a host without a port. */
export const DEFAULT_REGISTRY_PORTS: Readonly<Record<string, number>> = {
  etcd: 2379,
  zookeeper: 2181,
  zk: 2181,
  redis: 6379,
  'redis-sentinel': 26379,
};

/** Kinds that name one server only (several hosts would silently use the first). */
const SINGLE_HOST_KINDS: Readonly<Record<string, string>> = {
  redis:
    'redis:// takes one server; for a primary with replicas watched by Sentinel, name the sentinels: ' +
    'redis-sentinel://s1:26379,s2:26379,s3:26379/<master name>',
};

/**
 * Kinds whose host list is followed by one name (`/<name>`), stored in `params` under the given key:
 * the Sentinel master group of `redis-sentinel://s1:26379,s2:26379/mymaster`.
 */
const NAMED_KINDS: Readonly<Record<string, { param: string; what: string; example: string }>> = {
  'redis-sentinel': {
    param: 'master',
    what: 'the master name the sentinels monitor',
    example: 'redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster',
  },
};

/** Kinds whose address carries a directory instead of `host:port` entries. */
const PATH_KINDS = new Set(['file']);

/** Kinds whose entries must carry an explicit port. */
const PORT_REQUIRED_KINDS = new Set(['direct']);

/** What a registry address looks like, for messages. */
export const REGISTRY_ADDRESS_FORMAT =
  'kind://host:port[,host:port][?key=value], e.g. etcd://127.0.0.1:2379 or file://.callisto';

function badAddress(raw: string, why: string): RpcError {
  return new RpcError(
    'BadRequest',
    `invalid registry address "${redactAddress(raw)}": ${redactAddress(why)} (expected ${REGISTRY_ADDRESS_FORMAT})`,
  );
}

/** What is wrong with an address, or the parsed address. */
export type RegistryAddressCheck = { address: RegistryAddress; problem?: undefined } | { problem: string };

/** Parses `host:port` (or `[v6]:port`); applies the kind's default port when none is given. */
function parseHostPort(entry: string, kind: string): string | { problem: string } {
  const slash = entry.indexOf('/');
  if (slash !== -1) {
    const pathPart = entry.slice(slash);
    return {
      problem:
        pathPart === '/'
          ? `"${entry}" ends with a slash; ${kind}:// takes host:port entries only, remove the "/"`
          : `"${entry}" has a path "${pathPart}"; ${kind}:// takes host:port entries only, not a path`,
    };
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d*))?$/.exec(entry);
  if (!match) return { problem: `"${entry}" is not host:port` };
  const host = match[1] as string;
  const portText = match[2];
  if (portText === undefined || portText === '') {
    const fallback = DEFAULT_REGISTRY_PORTS[kind];
    if (fallback === undefined || PORT_REQUIRED_KINDS.has(kind)) {
      return { problem: `"${entry}" has no port (${kind}:// has no default port; write ${host}:<port>)` };
    }
    return `${host}:${fallback}`;
  }
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    return { problem: `port "${portText}" of "${entry}" is not between 1 and 65535` };
  }
  return `${host}:${port}`;
}

/** The kind (lower-cased scheme) of an address, or undefined when it has no `kind://`. */
export function registryAddressKind(raw: string): string | undefined {
  const scheme = /^\s*([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(raw);
  return scheme ? (scheme[1] as string).toLowerCase() : undefined;
}

/**
 * Parses a registry address, or says what is wrong with it. The kind is the scheme (lower-cased);
 * `file://` keeps the rest as one directory (relative like `file://.callisto`, or absolute like
 * `file:///var/lib/callisto`); other kinds split the rest on commas into `host:port` entries. Query
 * parameters land in `params`.
 */
export function checkRegistryAddress(raw: string): RegistryAddressCheck {
  if (typeof raw !== 'string') return { problem: 'not a string' };
  const trimmed = raw.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s.exec(trimmed);
  if (!scheme) return { problem: 'missing "kind://"' };
  const kind = (scheme[1] as string).toLowerCase();
  const rest = scheme[2] as string;
  const queryAt = rest.indexOf('?');
  const body = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const params: Record<string, string> = {};
  if (queryAt !== -1) {
    for (const [key, value] of new URLSearchParams(rest.slice(queryAt + 1))) params[key] = value;
  }
  let hosts: string[];
  let hostPart = body;
  const named = NAMED_KINDS[kind];
  if (named !== undefined) {
    const slash = body.indexOf('/');
    let name = '';
    try {
      name = slash === -1 ? '' : decodeURIComponent(body.slice(slash + 1));
    } catch {
      return { problem: `"${body.slice(slash + 1)}" is not a valid URL-encoded name` };
    }
    if (name === '' || name.includes('/')) {
      return {
        problem: `${kind}:// needs ${named.what} after the hosts, once: ${named.example}`,
      };
    }
    if (params[named.param] !== undefined && params[named.param] !== name) {
      return { problem: `the ${named.param} is given twice ("${name}" and ?${named.param}=)` };
    }
    params[named.param] = name;
    hostPart = body.slice(0, slash);
  }
  if (PATH_KINDS.has(kind)) {
    const dir = decodeURIComponent(body);
    if (dir === '') return { problem: 'no directory' };
    hosts = [dir];
  } else {
    const entries = hostPart
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    if (entries.length === 0) return { problem: 'no host' };
    hosts = [];
    for (const entry of entries) {
      const parsed = parseHostPort(entry, kind);
      if (typeof parsed !== 'string') return parsed;
      hosts.push(parsed);
    }
    const single = SINGLE_HOST_KINDS[kind];
    if (single !== undefined && hosts.length > 1) return { problem: `${hosts.length} hosts: ${single}` };
  }
  return { address: { kind, hosts, params, raw } };
}

/**
 * Parses a registry address (see `checkRegistryAddress`). Throws `RpcError('BadRequest')` naming the
 * address and what was expected.
 */
export function parseRegistryAddress(raw: string): RegistryAddress {
  const checked = checkRegistryAddress(raw);
  if (checked.problem !== undefined) throw badAddress(String(raw), checked.problem);
  return checked.address;
}

/** The address as text for messages: the original string, or rebuilt from its parts. */
export function formatRegistryAddress(address: RegistryAddress): string {
  if (address.raw) return address.raw;
  const query = new URLSearchParams(address.params).toString();
  return `${address.kind}://${address.hosts.join(',')}${query ? `?${query}` : ''}`;
}

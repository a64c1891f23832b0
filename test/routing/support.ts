/** Pieces shared by the routing tests: the six providers' labels, and a directory fed by hand. */
import { ClientInvocation } from '../../src/consumer/client-invocation.js';
import { createDirectory, type Directory, type DirectoryFeed } from '../../src/consumer/directory.js';
import { MethodRoute } from '../../src/consumer/method-route.js';
import { directProviderRecord } from '../../src/registry/direct-registry.js';
import { emptyOverrides, type ServiceOverrides } from '../../src/registry/override-record.js';
import type { ProviderRecord } from '../../src/registry/provider-record.js';
import type { RouteRule } from '../../src/routing/route-rule.js';
import type { RouteCaller } from '../../src/routing/router.js';
import { msgpack } from '../support/raw-client.js';

export const KEY = { name: 'test.Routed', version: '1.0.0', group: '' };

/**
 * The six providers of the routing tests: three in zone a, three in zone b; versions 1.0.0 and 2.0.0
 * (the `version` label); two tagged (`gray` in each zone), one of them also tenant-labelled.
 */
export const SIX: ReadonlyArray<{ name: string; tags: Record<string, string> }> = [
  { name: 'a1', tags: { zone: 'a', version: '1.0.0' } },
  { name: 'a2', tags: { zone: 'a', version: '1.0.0' } },
  { name: 'a3', tags: { zone: 'a', version: '2.0.0', tag: 'gray' } },
  { name: 'b1', tags: { zone: 'b', version: '1.0.0' } },
  { name: 'b2', tags: { zone: 'b', version: '2.0.0' } },
  { name: 'b3', tags: { zone: 'b', version: '1.0.0', tag: 'gray', tenant: 'acme' } },
];

export interface HandFedDirectory {
  readonly directory: Directory;
  setRecords(records: readonly ProviderRecord[]): void;
  setRoutes(routes: RouteRule[]): void;
  /** Marks a provider (by port) down or up. */
  setAvailable(port: number, available: boolean): void;
}

export function handFedDirectory(caller?: RouteCaller): HandFedDirectory {
  let update: (records: readonly ProviderRecord[]) => void = () => {};
  let override: ((overrides: ServiceOverrides) => void) | undefined;
  const down = new Set<number>();
  const feed: DirectoryFeed = {
    ready: Promise.resolve(),
    start(deliver, apply) {
      update = deliver;
      override = apply;
    },
    whyEmpty: () => undefined,
    close: async () => {},
  };
  const directory = createDirectory({
    key: KEY,
    feed,
    link: (record) => ({
      get available() {
        return !down.has(record.port);
      },
      connection: () => ({ send() {} }),
    }),
    ...(caller ? { caller } : {}),
  });
  return {
    directory,
    setRecords: (records) => update(records),
    setRoutes: (routes) => override?.({ ...emptyOverrides(), routes }),
    setAvailable(port, available) {
      if (available) down.delete(port);
      else down.add(port);
    },
  };
}

/** Records of the six providers (ports 1001…), or of plain ones without labels. */
export function sixRecords(labelled = true): ProviderRecord[] {
  return SIX.map(({ name, tags }, i) => ({
    ...directProviderRecord(KEY, `127.0.0.1:${1001 + i}`),
    application: name,
    tags: labelled ? tags : {},
  }));
}

export function invocation(method = 'read', attachments: Record<string, string> = {}, args: unknown[] = []) {
  return new ClientInvocation({
    route: new MethodRoute(KEY, method, msgpack),
    args,
    attachments,
    timeoutMs: 0,
    signal: undefined,
    oneway: false,
    idempotent: true,
  });
}

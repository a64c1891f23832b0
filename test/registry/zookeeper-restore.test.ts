/**
 * A ZooKeeper registry restores its registrations each time its session connects, before it reports
 * `connected` and reads its lists. One registration that cannot be written must not keep it from
 * connecting: it is reported, its own call fails, and everything else (other registrations, every
 * subscription) works. The trigger in the field was two live sessions holding the same path (two consumer
 * apps in one process shared `consumers/<host>:<pid>` before entries got an instance number); here, a
 * path the client library refuses, which fails the same way every time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/create-registry.js';
import type { ProviderRecord } from '../../src/registry/provider-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { waitFor } from '../support/wait-for.js';
import { providerRecord, uniqueServiceKey } from './fixtures/records.js';

const opened: Registry[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((registry) => registry.close()));
});

describe('zookeeper registry: a registration that cannot be restored', () => {
  it('does not keep the registry from connecting and following its lists', async () => {
    const key = uniqueServiceKey('restore');
    const lines: string[] = [];
    const registry = await createRegistry(`zookeeper://${sharedServerAddress('zookeeper')}`, {
      ttlMs: 4_000,
      log: (_level, message) => lines.push(message),
    });
    opened.push(registry);
    // all made before the session connects: restored together when it does
    const bad = registry
      .registerConsumer({
        service: key.name,
        version: key.version,
        group: key.group,
        host: 'a/../b',
        pid: 1,
        application: 'restore',
        startTime: Date.now(),
      })
      .then(
        () => 'registered',
        (error: Error) => error.message,
      );
    const good = registry.register(providerRecord(key, 7101));
    let seen: ProviderRecord[] = [];
    const subscribed = registry.subscribe(key, (list) => {
      seen = list;
    });

    await good;
    await subscribed;
    await waitFor(() => seen.length === 1, 10_000, {
      message: 'the list with the good registration arrives',
    });
    expect(registry.status).toBe('connected');
    expect(await bad).not.toBe('registered');
    expect(lines.filter((line) => /cannot restore .*consumers\/a\/\.\.\/b:1/.test(line))).toHaveLength(1);
  }, 30_000);
});

/**
 * What one change costs a ZooKeeper follower does not grow with the list: a provider joining a list of
 * 100 makes the follower list the children once and read the new child only. Before, every change made
 * every follower read every child again (one getData per child: with 1,000 registrations and 50
 * consumers, ~20 ms of consumer CPU and ~110 ms of server CPU per update; docs/scaling.md).
 *
 * Counted on a private server, not timed: the packets the server received (`srvr`'s `Received:`)
 * while one provider joins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/create-registry.js';
import type { ProviderRecord } from '../../src/registry/provider-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { tcpExchange } from '../setup/cluster-member.js';
import { startZooKeeper, type TestServer } from '../setup/servers.js';
import { waitFor } from '../support/wait-for.js';
import { providerRecord, uniqueServiceKey } from './fixtures/records.js';

const PROVIDERS = 100;
let server: TestServer;
const opened: Registry[] = [];

beforeAll(async () => {
  server = await startZooKeeper();
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(opened.map((registry) => registry.close()));
  await server?.close();
});

async function received(): Promise<number> {
  const reply = await tcpExchange(server.host, server.port, 'srvr');
  const match = /Received: (\d+)/.exec(reply);
  if (!match) throw new Error(`no Received in srvr reply: ${reply}`);
  return Number(match[1]);
}

describe('zookeeper registry: the cost of one change', () => {
  it('a provider joining a list of 100 costs the follower a listing and one read, not 100 reads', async () => {
    const key = uniqueServiceKey('zkcost');
    const providers = await createRegistry(server.url, { ttlMs: 6_000 });
    const follower = await createRegistry(server.url, { ttlMs: 6_000 });
    opened.push(providers, follower);
    for (let i = 0; i < PROVIDERS; i++) await providers.register(providerRecord(key, 21_000 + i));
    let seen: ProviderRecord[] = [];
    await follower.subscribe(key, (list) => {
      seen = list;
    });
    await waitFor(() => seen.length === PROVIDERS, 10_000);

    const before = await received();
    await providers.register(providerRecord(key, 22_000));
    await waitFor(() => seen.length === PROVIDERS + 1, 10_000, {
      message: 'the follower sees the new provider',
    });
    const packets = (await received()) - before;
    console.log(
      `[registry] zookeeper: one provider joining a list of ${PROVIDERS}: ${packets} packets to the server`,
    );
    // the registration (create), the follower's listing and read, a few pings: far from one read per child
    expect(packets).toBeLessThan(PROVIDERS / 4);
  }, 60_000);
});

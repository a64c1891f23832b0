/**
 * Selection in a service's directory and the outlier detector's answer: `select()` claims the provider
 * it picks with `detector.allow()` and picks another when the detector refuses (an ejected provider, or a
 * half-open one whose single probe is out); `allow()` agrees with `filter()` for providers the ejection
 * cap keeps selectable. Real connection pool (to ports nothing listens on), real detector and directory.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutlierDetector } from '../../src/cluster/circuit-breaker.js';
import { ClientInvocation } from '../../src/consumer/client-invocation.js';
import { type ConnectionPool, createConnectionPool } from '../../src/consumer/connection-pool.js';
import { createDirectory } from '../../src/consumer/directory.js';
import { fixedFeed } from '../../src/consumer/directory-feed.js';
import { MethodRoute } from '../../src/consumer/method-route.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../../src/protocol/connection-options.js';
import { directProviderRecord } from '../../src/registry/direct-registry.js';
import { createTcpTransport } from '../../src/transport/tcp.js';
import { msgpack } from '../support/raw-client.js';
import { manualClock } from '../support/seeded-random.js';
import { waitFor } from '../support/wait-for.js';

const KEY = { name: 'test.Selection', version: '1.0.0', group: '' };
const pools: ConnectionPool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.destroy();
});

async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const call = () =>
  new ClientInvocation({
    route: new MethodRoute(KEY, 'm', msgpack),
    args: [],
    attachments: {},
    timeoutMs: 0,
    signal: undefined,
    oneway: false,
    idempotent: true,
  });

describe("a directory's select() and the outlier detector", () => {
  it('skips a provider the detector refuses, even in the fallback to the whole list', async () => {
    // Two providers whose connections are both refused and backing off: nothing is "selectable", so
    // select() falls back to the whole list. The first one is half-open with its single probe out.
    const ports = [await deadPort(), await deadPort()];
    const tcp = createTcpTransport();
    const pool = createConnectionPool([], {
      connection: DEFAULT_CONNECTION_OPTIONS,
      transport: () => tcp,
      reconnectBaseMs: 60_000,
      reconnectMaxMs: 60_000,
      idleTimeoutMs: 0,
    });
    pools.push(pool);
    for (const port of ports) {
      pool.retain('127.0.0.1', port);
      void pool
        .handle('127.0.0.1', port)
        .connection()
        .ready()
        .catch(() => {});
    }
    await waitFor(() => ports.every((port) => !pool.handle('127.0.0.1', port).available));
    const directory = createDirectory({
      key: KEY,
      feed: fixedFeed(ports.map((port) => directProviderRecord(KEY, `127.0.0.1:${port}`))),
      link: (record) => pool.handle(record.host, record.port),
    });
    const clock = manualClock(0);
    const detector = directory.outlierDetector({
      now: clock.now,
      consecutiveFailures: 1,
      baseEjectionMs: 100,
    });
    const [first, second] = directory.list();
    detector.record(first!.address, false); // ejected
    clock.advance(100); // half-open
    expect(detector.allow(first!.address)).toBe(true); // the probe, now out
    // A balancer that always takes the first candidate: without the claim, it is the refused one.
    const balancer = { select: <E>(endpoints: readonly E[]) => endpoints[0]! };
    expect(directory.selectable()).toEqual([]);
    expect(directory.select(call(), balancer).address).toBe(second!.address);
    // Both refuse (the second ejected too): trying beats failing unsent, the balancer's pick goes.
    detector.record(second!.address, false);
    expect(directory.select(call(), balancer).address).toBe(first!.address);
  });

  it('allow() agrees with filter() for ejected providers the cap keeps selectable', () => {
    const clock = manualClock(0);
    const detector = createOutlierDetector({
      now: clock.now,
      consecutiveFailures: 1,
      maxEjectionRatio: 0.4,
    });
    const endpoints = ['a', 'b', 'c', 'd', 'e'].map((address) => ({ address }));
    detector.record('a', false);
    clock.advance(1);
    detector.record('b', false);
    clock.advance(1);
    detector.record('c', false);
    // Three of five ejected; the cap keeps two out (those ejected longest) and readmits the one closest
    // to its probe, a.
    expect(detector.filter(endpoints).map((e) => e.address)).toEqual(['a', 'd', 'e']);
    expect(detector.allow('a')).toBe(true);
    expect(detector.allow('b')).toBe(false);
    expect(detector.allow('c')).toBe(false);
  });
});

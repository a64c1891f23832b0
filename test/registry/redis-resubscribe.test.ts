/**
 * The Redis registry's subscriber connection across a reconnect, through the tests' TCP proxy
 * (support/tcp-proxy.ts) in front of the shared Redis: the channels are subscribed again (a change arrives by message, long
 * before the periodic re-read), and a resubscribe still pending when the registry closes is settled
 * with nobody's promise left unhandled (ioredis's own resubscribe left it so: redis/ioredis#2187).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/create-registry.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { providersPath } from '../../src/registry/registry-paths.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { follow } from './fixtures/follower.js';
import { providerRecord, uniqueServiceKey } from './fixtures/records.js';

/** Long: the periodic re-read (every TTL/2) cannot be what delivers a change within the test. */
const TTL_MS = 120_000;

interface RedisProxy {
  readonly address: string;
  /** SUBSCRIBE commands held back (never forwarded) since `holdSubscribes()`. */
  readonly heldSubscribes: number;
  /**
   * From now on a connection whose client sends a SUBSCRIBE goes silent: that chunk and everything
   * after it are never forwarded, so no reply comes (not even to QUIT).
   */
  holdSubscribes(): void;
  /** Ends every connection, as a restarted server or a lost link does. */
  dropAll(): void;
  close(): Promise<void>;
}

async function startRedisProxy(target: string): Promise<RedisProxy> {
  let holding = false;
  let held = 0;
  const proxy = await startTcpProxy(target, {
    tap: () => {
      let silent = false;
      return {
        passes(chunk) {
          if (!silent && holding && /\bsubscribe\b/i.test(chunk.toString('latin1'))) {
            silent = true;
            held++;
          }
          return !silent;
        },
      };
    },
  });
  return {
    address: proxy.address,
    get heldSubscribes() {
      return held;
    },
    holdSubscribes() {
      holding = true;
    },
    dropAll: () => proxy.dropAll(),
    close: () => proxy.close(),
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(address: string, ttlMs = TTL_MS): Promise<Registry> {
  const registry = await createRegistry(`redis://${address}`, { ttlMs });
  cleanups.push(() => registry.close());
  return registry;
}

describe('redis registry: the subscriber across a reconnect', () => {
  it('subscribes its channels again: a change after the reconnect arrives by message', async () => {
    const proxy = await startRedisProxy(sharedServerAddress('redis'));
    cleanups.push(() => proxy.close());
    const key = uniqueServiceKey('resubscribe');
    const consumer = await open(proxy.address);
    const provider = await open(sharedServerAddress('redis'));
    // the server's own count of the channel's subscribers, asked beside the proxy
    const observer = new Redis(`redis://${sharedServerAddress('redis')}`, { lazyConnect: true });
    await observer.connect();
    cleanups.push(() => observer.disconnect());
    const channel = providersPath('/callisto', servicePathSegment(key));
    const subscribers = async () => {
      const [, count] = (await observer.pubsub('NUMSUB', channel)) as [string, number];
      return Number(count);
    };
    const followed = await follow(consumer, key);
    await waitFor(async () => (await subscribers()) === 1, 5_000, { message: 'the consumer subscribes' });

    proxy.dropAll();
    await waitFor(async () => (await subscribers()) === 0, 5_000, { message: 'the server sees it go' });
    await waitFor(async () => (await subscribers()) === 1, 10_000, {
      message: 'the consumer subscribes again after reconnecting',
    });
    await provider.register(providerRecord(key, 20_501));
    await waitFor(() => followed.has('127.0.0.1:20501'), 5_000, {
      message: 'the registration reaches the consumer by message (the re-read is a minute away)',
    });
  });

  it('leaves no promise unhandled when it closes with a resubscribe unanswered', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(() => {
      process.off('unhandledRejection', onUnhandled);
    });
    const proxy = await startRedisProxy(sharedServerAddress('redis'));
    cleanups.push(() => proxy.close());
    // a short TTL: its operations (QUIT included) give up after 1 s
    const consumer = await open(proxy.address, 2_000);
    await follow(consumer, uniqueServiceKey('resubscribe'));
    await waitFor(() => consumer.status === 'connected', 5_000);

    proxy.holdSubscribes();
    proxy.dropAll();
    await waitFor(() => proxy.heldSubscribes > 0, 10_000, {
      message: 'the subscriber reconnects and asks to subscribe again',
    });
    // QUIT gets no answer: the client gives up and drops the connection, failing what is pending
    await consumer.close();
    // a rejection nobody handles is reported once the current macrotask is over
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled.map(String)).toEqual([]);
  });
});

/**
 * `onRetriesExhausted` and the `callisto:client:retries-exhausted` channel, over real sockets: told
 * exactly once per call that failed with its retries used up, never for a call that succeeded on a
 * retry or failed with an error that is never retried (a business error).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANNEL_NAMES, type RetriesExhaustedMessage, RpcError } from '../../src/index.js';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

/** Two providers: `fail-*` keys always overloaded, `flaky-*` overloaded on their first attempt only. */
async function providers(): Promise<string[]> {
  const attempts = new Map<string, number>();
  return Promise.all(
    Array.from({ length: 2 }, async (_, i) => {
      const app = await testApp({ application: `p${i}` });
      app.provide(FlakyDef, {
        async read(key) {
          const n = (attempts.get(key) ?? 0) + 1;
          attempts.set(key, n);
          if (key.startsWith('fail') || (key.startsWith('flaky') && n === 1)) {
            throw new RpcError('Overloaded', `p${i} is overloaded`);
          }
          if (key.startsWith('business')) throw new Error('no such key');
          return `p${i}:${key}`;
        },
        write: async (key) => key,
        budget: async () => 0,
      });
      await app.start();
      return app.address!;
    }),
  );
}

describe('onRetriesExhausted', () => {
  it('is called once per exhausted call (and published), not for a call that succeeded on a retry', async () => {
    const addresses = await providers();
    const hooked: RetriesExhaustedMessage[] = [];
    const published: RetriesExhaustedMessage[] = [];
    const listen = (message: unknown) => published.push(message as RetriesExhaustedMessage);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.retriesExhausted, listen);
    try {
      const consumer = await testApp({ application: 'consumer' });
      const ref = consumer.refer(FlakyDef, {
        url: addresses,
        retries: 2,
        timeoutMs: 10_000,
        outlierDetection: false,
        onRetriesExhausted: (event) => hooked.push(event),
      });
      const outcomes = await Promise.all(
        ['fail-1', 'flaky-1', 'fail-2', 'flaky-2', 'business-1', 'ok-1'].map((key) =>
          ref.read(key).then(
            () => `${key}: ok`,
            (error: unknown) => `${key}: ${RpcError.from(error).code}`,
          ),
        ),
      );
      expect(outcomes).toEqual([
        'fail-1: Overloaded',
        'flaky-1: ok',
        'fail-2: Overloaded',
        'flaky-2: ok',
        'business-1: ProviderError',
        'ok-1: ok',
      ]);
      const summary = (events: RetriesExhaustedMessage[]) =>
        events.map((event) => `${event.method} ${event.attempts} ${event.reason} ${event.error.code}`).sort();
      expect(summary(hooked)).toEqual(['read 3 attempts Overloaded', 'read 3 attempts Overloaded']);
      expect(
        hooked.every((event) => event.service === FlakyDef.name && addresses.includes(event.address)),
      ).toBe(true);
      expect(summary(published)).toEqual(summary(hooked));
    } finally {
      diagnosticsChannel.unsubscribe(CHANNEL_NAMES.retriesExhausted, listen);
    }
  });

  it('refuses a hook that is not a function, naming the key', async () => {
    const consumer = await testApp({ application: 'consumer' });
    expect(() =>
      consumer.refer(FlakyDef, { url: '127.0.0.1:1', onRetriesExhausted: 'log' as never }),
    ).toThrow(/onRetriesExhausted/);
  });
});

/**
 * The waits a retry policy makes, observed over real sockets: `providers` provider apps whose `read`
 * always refuses with `Overloaded` (after `failAfterMs`, a provider that fails slowly), one consumer
 * making `calls` reads at once through `reference` (its retry options), and per call the gaps between
 * the starts of its attempts (ms), from the providers' clock (one process).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import { type ReferenceOptions, RpcError } from '../../src/index.js';
import { FlakyDef, type FlakyService } from '../fixtures/flaky-service.js';
import { testApp } from './apps.js';

export interface AttemptGapsInit {
  readonly providers: number;
  readonly calls: number;
  /** How long each attempt takes before it is refused. Default 0. */
  readonly failAfterMs?: number;
  readonly reference: ReferenceOptions<FlakyService>;
}

export async function attemptGaps(init: AttemptGapsInit): Promise<number[][]> {
  const seen = new Map<string, number[]>();
  const addresses = await Promise.all(
    Array.from({ length: init.providers }, async (_, i) => {
      const app = await testApp({ application: `p${i}` });
      app.provide(FlakyDef, {
        async read(key) {
          seen.set(key, [...(seen.get(key) ?? []), performance.now()]);
          if (init.failAfterMs !== undefined) await delay(init.failAfterMs);
          throw new RpcError('Overloaded', `p${i} is overloaded`);
        },
        write: async (key) => key,
        budget: async () => 0,
      });
      await app.start();
      return app.address!;
    }),
  );
  const consumer = await testApp({ application: 'consumer' });
  // adaptive throttling off: providers that refuse everything would soon be refused locally, without the
  // waits under test (test/overload/adaptive-throttling.test.ts tests it)
  const ref = consumer.refer(FlakyDef, { url: addresses, adaptiveThrottling: false, ...init.reference });
  await Promise.all(
    Array.from({ length: init.calls }, (_, i) =>
      ref.read(`k${i}`).then(
        () => expect.unreachable('every provider is overloaded'),
        (error: unknown) => expect(RpcError.is(error) && error.code).toBe('Overloaded'),
      ),
    ),
  );
  return [...seen.values()].map((times) => times.slice(1).map((time, i) => time - times[i]!));
}

/**
 * `consumer.attemptTimeoutMs`: the longest wait of one attempt of an idempotent method, so a call stuck
 * on a provider that does not answer (a host gone silent) moves to another within its deadline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError } from '../../src/index.js';
import { closeAll } from '../support/apps.js';
import { flakyConsumer, flakyProviders } from '../support/cluster-setup.js';

afterEach(closeAll);

describe('consumer.attemptTimeoutMs', () => {
  it('moves an idempotent call stuck on a provider that does not answer to another within its deadline', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, {
      loadbalance: 'roundrobin',
      timeoutMs: 5_000,
      outlierDetection: false,
      // the cap gives the hanging provider up; the answering one, on a loaded machine, answers within it
      methods: { read: { attemptTimeoutMs: 500 } },
    });
    try {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => ref.read(`k${i}`)));
      expect(results).toEqual(Array.from({ length: 10 }, (_, i) => `p1:k${i}`));
      // the hanging provider was tried (each of its attempts gave up after the cap)
      expect(providers[0]!.impl.reads).toBeGreaterThan(0);
    } finally {
      providers[0]!.impl.releaseAll();
    }
  });

  it('sends the capped budget to the provider for an idempotent method, the whole deadline otherwise', async () => {
    const providers = await flakyProviders(1);
    const capped = await flakyConsumer(providers, {
      timeoutMs: 5_000,
      attemptTimeoutMs: 200,
      methods: { budget: { idempotent: true } },
    });
    const budget = await capped.ref.budget();
    expect(budget).toBeLessThanOrEqual(200);
    expect(budget).toBeGreaterThan(0);
    // not idempotent: a timed-out attempt is not retried, so it is never capped
    const plain = await flakyConsumer(providers, { timeoutMs: 5_000, attemptTimeoutMs: 200 });
    expect(await plain.ref.budget()).toBeGreaterThan(1_000);
  });

  it('never retries a non-idempotent call that timed out', async () => {
    const providers = await flakyProviders(2);
    for (const provider of providers) provider.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, { timeoutMs: 600, attemptTimeoutMs: 50 });
    try {
      const error = await ref.write('w').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcError);
      expect((error as RpcError).code).toBe('Timeout');
      expect(providers[0]!.impl.writes.length + providers[1]!.impl.writes.length).toBe(1);
    } finally {
      for (const provider of providers) provider.impl.releaseAll();
    }
  });

  it('refuses a negative value at start with the key', async () => {
    const { callisto, ConfigError } = await import('../../src/index.js');
    await expect(
      callisto({ consumer: { attemptTimeoutMs: -1 }, load: { configFile: false, env: false } }),
    ).rejects.toThrow(ConfigError);
    await expect(
      callisto({ consumer: { attemptTimeoutMs: -1 }, load: { configFile: false, env: false } }),
    ).rejects.toThrow(/consumer\.attemptTimeoutMs/);
  });
});

/**
 * Client-side adaptive throttling (issue 28), over real sockets: a consumer that sees a provider refuse
 * its calls `Overloaded` sends it only a small part of what follows and refuses the rest itself, never
 * sent (so failover takes them to a healthy provider); `adaptiveThrottling: false` sends every call. The
 * provider counts what reaches it. The outlier detector and the learnt effective weights are off, so that
 * only throttling keeps calls away.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type CallistoApp, RpcError } from '../../src/index.js';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus, sampleValue } from '../support/prometheus-text.js';

afterEach(closeAll);

const CALLS = 200;

/** A provider of test.Flaky whose reads all reach `onRead`, which answers or refuses. */
async function provider(name: string, overloaded: boolean) {
  let reads = 0;
  const app = await testApp({ application: name });
  app.provide(FlakyDef, {
    async read(key) {
      reads++;
      if (overloaded) throw new RpcError('Overloaded', `${name} is overloaded`);
      return `${name}:${key}`;
    },
    write: async (key) => key,
    budget: async () => 0,
  });
  await app.start();
  return { address: app.address!, reads: () => reads };
}

async function outcome(call: Promise<string>): Promise<string | RpcError> {
  try {
    return await call;
  } catch (error) {
    expect(RpcError.is(error)).toBe(true);
    return error as RpcError;
  }
}

async function shedOn(app: CallistoApp): Promise<Record<string, number>> {
  const response = await fetch(`http://127.0.0.1:${app.adminPort}/stats`);
  const feed = (await response.json()) as {
    methods: Array<{ side: string; method: string; shed?: Record<string, number> }>;
  };
  return feed.methods.find((m) => m.side === 'consumer' && m.method === 'read')?.shed ?? {};
}

describe('adaptive throttling', () => {
  it('sends a provider that refuses everything far fewer calls than it is asked for, and refuses the rest unsent', async () => {
    const refusing = await provider('refusing', true);
    const consumer = await testApp({ admin: { enabled: true } });
    await consumer.start();
    const ref = consumer.refer(FlakyDef, { url: refusing.address, retries: 0, outlierDetection: false });
    const outcomes: Array<string | RpcError> = [];
    for (let i = 0; i < CALLS; i++) outcomes.push(await outcome(ref.read(`k${i}`)));
    for (const failed of outcomes) expect(failed).toMatchObject({ code: 'Overloaded' });
    const local = outcomes.filter((failed) => (failed as RpcError).details['shed'] === 'throttled');
    for (const failed of local) expect(failed).toMatchObject({ neverSent: true, remote: false });
    // 20 requests before the first refusal, then each sent with probability 1 / (requests + 1)
    expect(refusing.reads()).toBeGreaterThanOrEqual(20);
    expect(refusing.reads()).toBeLessThan(CALLS / 4);
    expect(refusing.reads() + local.length).toBe(CALLS);
    expect(await shedOn(consumer)).toEqual({ throttled: local.length });
    const metrics = parsePrometheus(
      await (await fetch(`http://127.0.0.1:${consumer.adminPort}/metrics`)).text(),
    );
    expect(
      sampleValue(metrics, 'callisto_shed_total', { side: 'consumer', method: 'read', reason: 'throttled' }),
    ).toBe(local.length);
  });

  it('fails the throttled calls over to a healthy provider: every call succeeds', async () => {
    const refusing = await provider('refusing', true);
    const healthy = await provider('healthy', false);
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, {
      url: [refusing.address, healthy.address],
      outlierDetection: false,
      effectiveWeight: false,
    });
    for (let i = 0; i < CALLS; i++) expect(await ref.read(`k${i}`)).toBe(`healthy:k${i}`);
    expect(healthy.reads()).toBe(CALLS);
    // about half of the calls' first attempts are balanced to `refusing`; few of them are sent
    expect(refusing.reads()).toBeLessThan(CALLS / 4);
  });

  it('a throttled attempt is not one of the retries: with retries 0 it still goes to the healthy provider', async () => {
    const refusing = await provider('refusing', true);
    const healthy = await provider('healthy', false);
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, {
      url: [refusing.address, healthy.address],
      retries: 0,
      outlierDetection: false,
      effectiveWeight: false,
    });
    const outcomes: Array<string | RpcError> = [];
    for (let i = 0; i < CALLS; i++) outcomes.push(await outcome(ref.read(`k${i}`)));
    const failed = outcomes.filter((one): one is RpcError => typeof one !== 'string');
    // the only failures are attempts `refusing` answered itself (retries 0); none refused unsent
    for (const one of failed) expect(one).toMatchObject({ code: 'Overloaded', remote: true });
    expect(failed.length).toBe(refusing.reads());
    expect(healthy.reads()).toBe(CALLS - failed.length);
    expect(refusing.reads()).toBeLessThan(CALLS / 4);
  });

  it('with adaptiveThrottling: false every call reaches the provider', async () => {
    const refusing = await provider('refusing', true);
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, {
      url: refusing.address,
      retries: 0,
      outlierDetection: false,
      adaptiveThrottling: false,
    });
    for (let i = 0; i < CALLS; i++) {
      const failed = await outcome(ref.read(`k${i}`));
      expect(failed).toMatchObject({ code: 'Overloaded', remote: true });
    }
    expect(refusing.reads()).toBe(CALLS);
  });

  it('does not retry an Overloaded refusal when there is no other provider: one attempt per call', async () => {
    const refusing = await provider('refusing', true);
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, {
      url: refusing.address,
      retries: 2,
      outlierDetection: false,
      adaptiveThrottling: false,
    });
    for (let i = 0; i < CALLS; i++) {
      expect(await outcome(ref.read(`k${i}`))).toMatchObject({ code: 'Overloaded', remote: true });
    }
    expect(refusing.reads()).toBe(CALLS);
  });

  it('throttles nothing while the provider accepts what it is sent', async () => {
    const healthy = await provider('healthy', false);
    const consumer = await testApp();
    const ref = consumer.refer(FlakyDef, { url: healthy.address, retries: 0 });
    for (let i = 0; i < CALLS; i++) expect(await ref.read(`k${i}`)).toBe(`healthy:k${i}`);
    expect(healthy.reads()).toBe(CALLS);
  });
});

/**
 * Per-method metrics from the `metrics` filters, over real sockets: a known sequence of calls
 * (successes, each error code, a refusal by a filter in front of the method, retries, failovers, an
 * ejection), then the counters as the admin port's /metrics serves them (parsed with a Prometheus text
 * parser) and as /stats reports them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CallistoApp,
  defineFilter,
  defineService,
  ErrorCode,
  type ErrorCodeName,
  RpcError,
} from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus, sampleValue } from '../support/prometheus-text.js';

afterEach(closeAll);

interface Meter {
  ok(): Promise<string>;
  fail(code: string): Promise<string>;
  hang(): Promise<string>;
  guarded(): Promise<string>;
}

const MeterDef = defineService<Meter>('test.Meter', {
  methods: { ok: {}, fail: {}, hang: {}, guarded: {} },
});

/** Every code a handler can answer with as an RpcError (a plain Error is ProviderError, below). */
const THROWN = (Object.keys(ErrorCode) as ErrorCodeName[]).filter((code) => code !== 'ProviderError');

const released: Array<() => void> = [];
afterEach(() => {
  for (const release of released.splice(0)) release();
});

class MeterImpl implements Meter {
  async ok() {
    return 'ok';
  }
  async fail(code: string): Promise<string> {
    if (code === 'business') throw new Error('no such account');
    throw new RpcError(code as ErrorCodeName, `failing with ${code}`);
  }
  hang(): Promise<string> {
    return new Promise((resolve) => released.push(() => resolve('late')));
  }
  async guarded() {
    return 'never';
  }
}

/** A provider filter in front of the method (where auth sits) that refuses `guarded`. */
const refuseGuarded = defineFilter({
  name: 'test-auth',
  position: 'provider',
  order: 250,
  start(invocation) {
    if (invocation.method === 'guarded') throw new RpcError('Unauthorized', 'no token');
  },
});

async function scrape(app: CallistoApp) {
  const response = await fetch(`http://127.0.0.1:${app.adminPort}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheus(await response.text());
}

describe('metrics', () => {
  it('count each outcome code on both sides, refusals included, with latency and last failure', async () => {
    const provider = await testApp({
      application: 'meter-provider',
      admin: { enabled: true },
      filters: { provider: [refuseGuarded] },
    });
    provider.provide(MeterDef, new MeterImpl());
    await provider.start();
    const consumer = await testApp({ application: 'meter-consumer', admin: { enabled: true } });
    await consumer.start();
    const meter = consumer.refer(MeterDef, { url: provider.address!, cluster: 'failfast', timeoutMs: 2000 });

    for (let i = 0; i < 3; i++) await meter.ok();
    for (const code of THROWN) await expect(meter.fail(code)).rejects.toMatchObject({ code });
    await expect(meter.fail('business')).rejects.toMatchObject({ code: 'ProviderError' });
    await expect(meter.guarded()).rejects.toMatchObject({ code: 'Unauthorized' });
    const slow = consumer.refer(MeterDef, { url: provider.address!, cluster: 'failfast', timeoutMs: 50 });
    await expect(slow.hang()).rejects.toMatchObject({ code: 'Timeout' });

    const server = await scrape(provider);
    const side = { application: 'meter-provider', side: 'provider', service: 'test.Meter', version: '1.0.0' };
    expect(sampleValue(server, 'callisto_calls_total', { ...side, method: 'ok', code: 'OK' })).toBe(3);
    for (const code of THROWN) {
      expect(sampleValue(server, 'callisto_calls_total', { ...side, method: 'fail', code })).toBe(1);
    }
    expect(
      sampleValue(server, 'callisto_calls_total', { ...side, method: 'fail', code: 'ProviderError' }),
    ).toBe(1);
    // refused by the filter in front of the method: counted by its code, never executed
    expect(
      sampleValue(server, 'callisto_calls_total', { ...side, method: 'guarded', code: 'Unauthorized' }),
    ).toBe(1);
    // the hanging call is still executing on the provider
    expect(sampleValue(server, 'callisto_calls_in_flight', { ...side, method: 'hang' })).toBe(1);
    expect(server.get('callisto_call_duration_seconds')!.type).toBe('HISTOGRAM');
    const okSide = { ...side, method: 'ok' };
    expect(sampleValue(server, 'callisto_call_duration_seconds_count', okSide)).toBe(3);
    expect(sampleValue(server, 'callisto_call_duration_seconds_bucket', { ...okSide, le: '+Inf' })).toBe(3);
    // sub-millisecond buckets: a loopback call lands below 10 ms
    expect(
      sampleValue(server, 'callisto_call_duration_seconds_bucket', { ...okSide, le: '0.0001' }),
    ).toBeDefined();
    expect(sampleValue(server, 'callisto_call_duration_seconds_bucket', { ...okSide, le: '0.01' })).toBe(3);
    expect(sampleValue(server, 'callisto_call_duration_seconds_sum', okSide)).toBeGreaterThan(0);
    expect(sampleValue(server, 'callisto_received_bytes_total', { ...side, method: 'ok' })).toBeGreaterThan(
      0,
    );
    expect(sampleValue(server, 'callisto_server_connections', { application: 'meter-provider' })).toBe(1);

    const client = await scrape(consumer);
    const mine = { application: 'meter-consumer', side: 'consumer', service: 'test.Meter' };
    expect(sampleValue(client, 'callisto_calls_total', { ...mine, method: 'ok', code: 'OK' })).toBe(3);
    for (const code of [...THROWN, 'ProviderError']) {
      expect(sampleValue(client, 'callisto_calls_total', { ...mine, method: 'fail', code })).toBe(1);
    }
    expect(
      sampleValue(client, 'callisto_calls_total', { ...mine, method: 'guarded', code: 'Unauthorized' }),
    ).toBe(1);
    expect(sampleValue(client, 'callisto_calls_total', { ...mine, method: 'hang', code: 'Timeout' })).toBe(1);
    expect(
      sampleValue(client, 'callisto_attempts_total', {
        ...mine,
        method: 'ok',
        peer: provider.address!,
        code: 'OK',
      }),
    ).toBe(3);
    expect(sampleValue(client, 'callisto_client_connections', { application: 'meter-consumer' })).toBe(1);
    expect(
      sampleValue(client, 'callisto_providers', {
        application: 'meter-consumer',
        service: 'test.Meter',
        state: 'healthy',
      }),
    ).toBe(1);

    // /stats: the same counts, and the last failure per method
    const stats = (await (await fetch(`http://127.0.0.1:${provider.adminPort}/stats`)).json()) as {
      application: string;
      methods: Array<Record<string, unknown>>;
    };
    expect(stats.application).toBe('meter-provider');
    const fail = stats.methods.find((m) => m.method === 'fail' && m.side === 'provider')!;
    expect(fail).toMatchObject({
      service: 'test.Meter',
      version: '1.0.0',
      group: '',
      calls: THROWN.length + 1,
      failures: THROWN.length + 1,
      inFlight: 0,
      lastFailure: { code: 'ProviderError', message: 'no such account' },
    });
    const ok = stats.methods.find((m) => m.method === 'ok' && m.side === 'provider')!;
    expect(ok).toMatchObject({ calls: 3, failures: 0, byCode: { OK: 3 } });
    const latency = ok.latencyMs as { p50: number; p90: number; p99: number };
    expect(latency.p50).toBeGreaterThan(0);
    expect(latency.p99).toBeGreaterThanOrEqual(latency.p50);
  });

  it('count retries, failovers and ejections on the consumer', async () => {
    const broken = new FlakyImpl('a');
    broken.mode = 'overloaded';
    const a = await testApp({ application: 'a' });
    a.provide(FlakyDef, broken);
    await a.start();
    const b = await testApp({ application: 'b' });
    b.provide(FlakyDef, new FlakyImpl('b'));
    await b.start();
    const consumer = await testApp({ application: 'retrying', admin: { enabled: true } });
    const flaky = consumer.refer(FlakyDef, {
      url: [a.address!, b.address!],
      cluster: 'failover',
      retries: 1,
      loadbalance: 'roundrobin',
      ejectAfterFailures: 2,
      ejectionMs: 60_000,
    });
    for (let i = 0; i < 6; i++) expect(await flaky.read('k')).toBe('b:k');

    const text = await consumer.metrics();
    const families = parsePrometheus(text);
    const labels = { application: 'retrying', service: 'test.Flaky', method: 'read' };
    const toA = sampleValue(families, 'callisto_attempts_total', {
      ...labels,
      peer: a.address!,
      code: 'Overloaded',
    });
    expect(toA).toBe(2);
    expect(sampleValue(families, 'callisto_retries_total', labels)).toBe(2);
    expect(sampleValue(families, 'callisto_failovers_total', labels)).toBe(2);
    expect(
      sampleValue(families, 'callisto_ejections_total', { application: 'retrying', service: 'test.Flaky' }),
    ).toBe(1);
    expect(
      sampleValue(families, 'callisto_providers', {
        application: 'retrying',
        service: 'test.Flaky',
        state: 'ejected',
      }),
    ).toBe(1);
    expect(sampleValue(families, 'callisto_calls_total', { ...labels, side: 'consumer', code: 'OK' })).toBe(
      6,
    );
    const peer = { application: 'retrying', service: 'test.Flaky' };
    expect(
      sampleValue(families, 'callisto_endpoint_state', { ...peer, peer: a.address!, state: 'ejected' }),
    ).toBe(1);
    expect(sampleValue(families, 'callisto_endpoint_state', { ...peer, peer: b.address! })).toBe(1);
    expect(sampleValue(families, 'callisto_endpoint_in_flight', { ...peer, peer: b.address! })).toBe(0);
    expect(
      sampleValue(families, 'callisto_endpoint_latency_seconds', { ...peer, peer: b.address! }),
    ).toBeGreaterThan(0);
  });

  it('are left out with metrics: false', async () => {
    const provider = await testApp({ metrics: false });
    provider.provide(MeterDef, new MeterImpl());
    await provider.start();
    const meter = provider.refer(MeterDef, { url: provider.address!, injvm: false });
    await meter.ok();
    expect(await provider.metrics()).not.toContain('callisto_calls_total{');
  });
});

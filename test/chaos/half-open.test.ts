/**
 * Chaos 4 — half-open connection. A provider process is frozen with SIGSTOP: its sockets stay open
 * (the kernel even accepts new connections for it) but nothing is answered. With a 400 ms heartbeat
 * interval the consumer must declare the connection dead within 3 intervals plus the tick granularity
 * and some slack, and idempotent calls (timeout far above the detection time) fail over to the other
 * provider: no call fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { ChaosDef } from './fixtures/chaos-service.js';
import { startLoad, summary } from './support/load.js';
import { captureLogger } from './support/log-capture.js';
import { killProviders, startProvider } from './support/provider-process.js';

const HEARTBEAT_MS = 400;
const MISSED_LIMIT = 3;
/** 3 silent intervals, up to one more until the next check, plus scheduling slack. */
const DETECTION_BOUND_MS = (MISSED_LIMIT + 1) * HEARTBEAT_MS + 400;
const RATE = 500;

afterEach(async () => {
  await closeAll();
  await killProviders();
});

describe('chaos: half-open connection', () => {
  it('detects a frozen provider by heartbeat and fails idempotent calls over to the other one', async () => {
    const providers = await Promise.all(
      ['p-a', 'p-b'].map((name) => startProvider({ name, heartbeatMs: HEARTBEAT_MS })),
    );
    const capture = captureLogger();
    const consumer = await testApp({
      application: 'chaos-consumer',
      heartbeatIntervalMs: HEARTBEAT_MS,
      logger: capture.logger,
    });
    const ref = consumer.refer(ChaosDef, {
      url: providers.map((p) => p.address),
      loadbalance: 'roundrobin',
      timeoutMs: 8_000,
      warmupMs: 0,
    });
    const seen = new Set<string>();
    await waitFor(async () => seen.add(await ref.whoAmI()).size === 2, 5_000);

    const load = startLoad({ ratePerSecond: RATE, call: (id) => ref.read(id), method: () => 'read' });
    const frozen = providers[1]!;
    let frozenAt = 0;
    let detectedMs = Number.NaN;
    let report: Awaited<ReturnType<typeof load.stop>>;
    try {
      await load.settle(RATE * 2);
      frozenAt = Date.now();
      frozen.freeze();
      const dead = await waitFor(
        () => capture.find(new RegExp(`lost connection to ${frozen.address}: no frame .* presumed dead`)),
        10_000,
        { message: 'heartbeat declares the frozen provider dead' },
      );
      detectedMs = dead.at - frozenAt;
      // Keep the load on while the frozen provider is tried again (the kernel still accepts).
      await load.settle(RATE * 4);
    } finally {
      report = await load.stop();
      frozen.thaw();
    }
    console.log(
      summary('half-open', report, {
        heartbeatMs: HEARTBEAT_MS,
        detectedMs,
        boundMs: DETECTION_BOUND_MS,
      }),
    );
    expect(report.failures.slice(0, 10)).toEqual([]);
    expect(detectedMs).toBeGreaterThanOrEqual(MISSED_LIMIT * HEARTBEAT_MS - 50);
    expect(detectedMs).toBeLessThanOrEqual(DETECTION_BOUND_MS);
  }, 60_000);
});

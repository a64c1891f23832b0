/**
 * Idempotent calls when a provider host goes silent, with the parameters of issue 15: a 1 s heartbeat
 * (the host is declared dead 3-4 s after it went silent) and a 3 s call deadline. Two providers and a
 * consumer on their own namespaced hosts (direct addresses: no registry in the way), 400 reads/s; p2's
 * link goes down for 6 s.
 *
 * What must hold: 0 failed calls (a read stuck on the silent host should be tried elsewhere in time).
 * What happens today: a read sent to p2 just before or after the cut waits there for its whole deadline
 * (3 s, shorter than the 3-4 s detection) and fails with Timeout: about a hundred per cut. The fix
 * (per-attempt deadlines, hedging, or failing fast on heartbeat loss: see docs/scaling.md "Silent
 * hosts") belongs to the consumer's cluster layer, which is being redesigned on branch `seams`; until it
 * lands, the first test is marked `it.fails` (it goes red the day the fix makes it pass: then drop
 * `.fails`). The second test keeps the scenario honest meanwhile: it ran, the cut happened, and every
 * failure is that gap (a read that waited on the silent host: Timeout, or Network when the heartbeat
 * gave the host up too late for another attempt), nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadReport } from '../chaos/support/load.js';
import { waitFor } from '../support/wait-for.js';
import { type Agent, killAgents, startAgent } from './support/agents.js';
import { createNetwork, type Host, type HostNetwork } from './support/netns.js';

const HEARTBEAT_MS = 1_000;
const TIMEOUT_MS = 3_000;
const RATE = 400;
const CUT_MS = 6_000;

let network: HostNetwork;
let p2Host: Host;
let consumer: Agent;
let p2Address: string;
let result: { report: LoadReport; detectedMs: number } | undefined;

beforeAll(async () => {
  network = await createNetwork();
  const [h1, h2, hc] = await Promise.all(['p1', 'p2', 'c1'].map((name) => network.addHost(name)));
  p2Host = h2!;
  const [p1, p2, c1] = await Promise.all([
    startAgent(h1!, 'p1'),
    startAgent(h2!, 'p2'),
    startAgent(hc!, 'c1'),
  ]);
  const infos = await Promise.all([
    p1!.provider({ host: '0.0.0.0', heartbeatMs: HEARTBEAT_MS, delayMs: 10 }),
    p2!.provider({ host: '0.0.0.0', heartbeatMs: HEARTBEAT_MS, delayMs: 10 }),
  ]);
  p2Address = infos[1]!.address;
  consumer = c1!;
  await consumer.consumer({
    url: infos.map((info) => info.address),
    heartbeatMs: HEARTBEAT_MS,
    timeoutMs: TIMEOUT_MS,
    retries: 2,
  });
  await waitFor(async () => (await consumer.observe()).routable.length === 2, 20_000);
}, 120_000);

afterAll(async () => {
  await killAgents();
  await network?.close();
});

async function settle(calls: number): Promise<void> {
  const start = (await consumer.loadStatus()).ok;
  await waitFor(async () => (await consumer.loadStatus()).ok >= start + calls, 30_000, { intervalMs: 50 });
}

describe('multi-host: idempotent calls when a provider host goes silent (1 s heartbeat, 3 s deadline)', () => {
  it.fails('fail over with 0 failures [known gap: fix pending in the cluster layer, branch seams]', async () => {
    await consumer.startLoad({ rate: RATE, mix: 'read' });
    let detectedMs = Number.NaN;
    try {
      await settle(RATE * 2);
      const cutAt = Date.now();
      await p2Host.cut();
      const detected = (await waitFor(
        async () => !(await consumer.observe()).routable.includes(p2Address) && Date.now(),
        15_000,
        { intervalMs: 25 },
      )) as number;
      detectedMs = detected - cutAt;
      await waitFor(() => Date.now() - cutAt >= CUT_MS, CUT_MS + 1_000, { intervalMs: 100 });
    } finally {
      await p2Host.heal();
    }
    await settle(RATE);
    const report = await consumer.stopLoad();
    result = { report, detectedMs };
    console.log(
      `[multihost] silent host, idempotent reads: calls=${report.issued} ok=${report.ok} ` +
        `failed=${report.failures.length} (${[...new Set(report.failures.map((f) => f.code))].join(',')}) ` +
        `detectedMs=${detectedMs} heartbeatMs=${HEARTBEAT_MS} timeoutMs=${TIMEOUT_MS}`,
    );
    for (const failure of report.failures.filter((f) => f.code !== 'Timeout').slice(0, 5)) {
      console.log(`[multihost]   ${failure.code} at ${failure.atMs} ms: ${failure.message}`);
    }
    expect(report.failures).toEqual([]);
  }, 90_000);

  it('(the gap above, measured) the scenario ran and every failure is a read stuck on the silent host', () => {
    expect(result, 'the scenario above did not run to its end').toBeDefined();
    const { report, detectedMs } = result!;
    expect(report.issued).toBeGreaterThanOrEqual(RATE * 5);
    expect(detectedMs).toBeGreaterThanOrEqual(3 * HEARTBEAT_MS - 100);
    // a read that waited on p2 for its whole deadline (Timeout), or until the heartbeat gave p2 up, too
    // late for another attempt (Network: "no frame from <p2> ... presumed dead")
    const other = report.failures.filter(
      (f) =>
        f.method !== 'read' ||
        !(f.code === 'Timeout' || (f.code === 'Network' && f.message.includes(p2Address))),
    );
    expect(other).toEqual([]);
  });
});

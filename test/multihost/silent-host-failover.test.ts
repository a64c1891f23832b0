/**
 * Idempotent calls when a provider host goes silent, with the parameters of issue 15: a 1 s heartbeat
 * (the host is declared dead 3-4 s after it went silent) and a 3 s call deadline. Two providers and a
 * consumer on their own namespaced hosts (direct addresses: no registry in the way), 400 reads/s; p2's
 * link goes down for 6 s.
 *
 * What must hold, with the default consumer configuration: 0 failed calls. The connection to p2 is
 * suspected at its first missed heartbeat (`consumer.suspectAfterMs`, default 1 s, here the heartbeat's
 * 1 s): nothing arrived while calls waited and a ping went unanswered, so new attempts avoid it and its
 * waiting idempotent attempts are tried on p1 with what is left of their deadline. Without suspicion
 * (the second consumer, `suspectAfterMs: 0`, same cut), a read sent to p2 just before or after the cut
 * waits there for its whole deadline (3 s, shorter than the 3-4 s detection) and fails with Timeout:
 * about 200 per cut (the second test shows that gap).
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
/** With the defaults (suspicion on), and without suspicion (the gap it closes), under the same cut. */
let defaults: Agent;
let plain: Agent;
let p2Address: string;
let reports: { defaults: LoadReport; plain: LoadReport; detectedMs: number } | undefined;

beforeAll(async () => {
  network = await createNetwork();
  const [h1, h2, hc1, hc2] = await Promise.all(['p1', 'p2', 'c1', 'c2'].map((name) => network.addHost(name)));
  p2Host = h2!;
  const [p1, p2, c1, c2] = await Promise.all([
    startAgent(h1!, 'p1'),
    startAgent(h2!, 'p2'),
    startAgent(hc1!, 'c1'),
    startAgent(hc2!, 'c2'),
  ]);
  const infos = await Promise.all([
    p1!.provider({ host: '0.0.0.0', heartbeatMs: HEARTBEAT_MS, delayMs: 10 }),
    p2!.provider({ host: '0.0.0.0', heartbeatMs: HEARTBEAT_MS, delayMs: 10 }),
  ]);
  p2Address = infos[1]!.address;
  defaults = c1!;
  plain = c2!;
  const common = {
    url: infos.map((info) => info.address),
    heartbeatMs: HEARTBEAT_MS,
    timeoutMs: TIMEOUT_MS,
    retries: 2,
  };
  await Promise.all([defaults.consumer(common), plain.consumer({ ...common, suspectAfterMs: 0 })]);
  for (const agent of [defaults, plain]) {
    await waitFor(async () => (await agent.observe()).routable.length === 2, 20_000);
  }
}, 120_000);

afterAll(async () => {
  await killAgents();
  await network?.close();
});

async function settle(agent: Agent, calls: number): Promise<void> {
  const start = (await agent.loadStatus()).ok;
  await waitFor(async () => (await agent.loadStatus()).ok >= start + calls, 30_000, { intervalMs: 50 });
}

function describeReport(name: string, report: LoadReport): string {
  const codes = [...new Set(report.failures.map((f) => f.code))].join(',');
  return `${name}: calls=${report.issued} ok=${report.ok} failed=${report.failures.length} (${codes})`;
}

describe('multi-host: idempotent calls when a provider host goes silent (1 s heartbeat, 3 s deadline)', () => {
  it('fail over with 0 failures with the default consumer configuration (suspicion at the first missed heartbeat)', async () => {
    await Promise.all([defaults, plain].map((agent) => agent.startLoad({ rate: RATE, mix: 'read' })));
    let detectedMs = Number.NaN;
    try {
      await Promise.all([defaults, plain].map((agent) => settle(agent, RATE * 2)));
      const cutAt = Date.now();
      await p2Host.cut();
      const detected = (await waitFor(
        async () => !(await plain.observe()).routable.includes(p2Address) && Date.now(),
        15_000,
        { intervalMs: 25 },
      )) as number;
      detectedMs = detected - cutAt;
      await waitFor(() => Date.now() - cutAt >= CUT_MS, CUT_MS + 1_000, { intervalMs: 100 });
    } finally {
      await p2Host.heal();
    }
    await Promise.all([defaults, plain].map((agent) => settle(agent, RATE)));
    const [defaultsReport, plainReport] = await Promise.all([defaults.stopLoad(), plain.stopLoad()]);
    reports = { defaults: defaultsReport!, plain: plainReport!, detectedMs };
    console.log(
      `[multihost] silent host, idempotent reads, detectedMs=${detectedMs} heartbeatMs=${HEARTBEAT_MS} ` +
        `timeoutMs=${TIMEOUT_MS}; ${describeReport('defaults', defaultsReport!)}; ` +
        describeReport('suspectAfterMs=0', plainReport!),
    );
    for (const failure of defaultsReport!.failures.slice(0, 5)) {
      console.log(`[multihost]   defaults ${failure.code} at ${failure.atMs} ms: ${failure.message}`);
    }
    expect(defaultsReport!.issued).toBeGreaterThanOrEqual(RATE * 5);
    expect(defaultsReport!.failures).toEqual([]);
  }, 90_000);

  it('(the gap without suspicion, same cut) every failure is a read stuck on the silent host', () => {
    expect(reports, 'the scenario above did not run to its end').toBeDefined();
    const { plain: report, detectedMs } = reports!;
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

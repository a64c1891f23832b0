/**
 * Providers on three namespaced hosts announce addresses a consumer on a fourth host can call: a wildcard
 * bind announces the host's own address (never 0.0.0.0 or 127.0.0.1), a bind to one address announces
 * it, and `advertiseHost` announces another address than the one bound. The consumer calls every one of
 * them over the bridge.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { killAgents, startAgent } from './support/agents.js';
import { createNetwork, type HostNetwork } from './support/netns.js';

let network: HostNetwork;
let dir: string;

beforeAll(async () => {
  network = await createNetwork();
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-advertise-'));
});

afterAll(async () => {
  await killAgents();
  await network?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('multi-host: what a provider announces', () => {
  it('wildcard, one address, advertiseHost: each announced address is reachable from another host', async () => {
    const registry = `file://${dir}/registry`;
    const [wild, bound, natted, client] = await Promise.all(
      ['wild', 'bound', 'natted', 'client'].map((name) => network.addHost(name)),
    );
    const aliasAddress = `${network.subnet}.200`;
    await natted!.addAddress(aliasAddress);

    const agents = await Promise.all(
      [wild!, bound!, natted!, client!].map((host) => startAgent(host, host.name)),
    );
    const [pWild, pBound, pNatted, consumer] = agents as [
      (typeof agents)[0],
      (typeof agents)[0],
      (typeof agents)[0],
      (typeof agents)[0],
    ];
    const infos = await Promise.all([
      pWild.provider({ registry, host: '0.0.0.0' }),
      pBound.provider({ registry, host: bound!.address }),
      pNatted.provider({ registry, host: '0.0.0.0', advertiseHost: aliasAddress }),
    ]);
    const announced = infos.map((info) => info.records[0]!.host);
    expect(announced).toEqual([wild!.address, bound!.address, aliasAddress]);
    for (const info of infos) {
      expect(info.address.startsWith(`${info.records[0]!.host}:`)).toBe(true);
      for (const record of info.records)
        expect(['0.0.0.0', '127.0.0.1', '::', '::1']).not.toContain(record.host);
    }

    await consumer.consumer({ registry });
    const answered = new Set<string>();
    await waitFor(
      async () => {
        const result = await consumer.request<{ value?: string; error?: string; message?: string }>('call', {
          method: 'whoAmI',
        });
        if (result.value) answered.add(result.value);
        return answered.size === 3;
      },
      20_000,
      { message: 'the consumer on another host calls all three providers' },
    );
    const seen = await consumer.observe();
    expect([...(seen.known['v1'] ?? [])].sort()).toEqual(infos.map((info) => info.address).sort());
    console.log(
      `[multihost] advertise: announced ${infos.map((i) => i.address).join(', ')}; all called from ${client!.address}`,
    );
  }, 90_000);
});

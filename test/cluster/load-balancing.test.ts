import { afterEach, describe, expect, it } from 'vitest';
import { closeAll } from '../support/apps.js';
import { flakyConsumer, flakyProviders } from '../support/cluster-setup.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const who = (answer: string) => answer.split(':')[0]!;

describe('load balancing over real providers', () => {
  it('roundrobin spreads calls evenly', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { loadbalance: 'roundrobin' });
    const counts = new Map<string, number>();
    for (let i = 0; i < 90; i++) {
      const name = who(await ref.read(`k${i}`));
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    expect([...counts.values()]).toEqual([30, 30, 30]);
  });

  it('consistenthash sends the same key to the same provider, and different keys across providers', async () => {
    const providers = await flakyProviders(3);
    const { ref } = await flakyConsumer(providers, { loadbalance: 'consistenthash' });
    const owners = new Map<string, string>();
    for (let i = 0; i < 60; i++) owners.set(`user-${i}`, who(await ref.read(`user-${i}`)));
    for (let i = 0; i < 60; i++) expect(who(await ref.read(`user-${i}`))).toBe(owners.get(`user-${i}`));
    expect(new Set(owners.values()).size).toBe(3);
  });

  it('leastactive keeps new calls away from a provider whose calls hang', async () => {
    const providers = await flakyProviders(2);
    providers[0]!.impl.mode = 'hang';
    const { ref } = await flakyConsumer(providers, { loadbalance: 'leastactive', timeoutMs: 10_000 });
    const hanging = Array.from({ length: 4 }, () => ref.read('slow').catch(() => undefined));
    await waitFor(() => providers[0]!.impl.reads >= 1);
    for (let i = 0; i < 20; i++) expect(who(await ref.read(`fast${i}`))).toBe('p1');
    providers[0]!.impl.releaseAll();
    await Promise.all(hanging);
  });
});

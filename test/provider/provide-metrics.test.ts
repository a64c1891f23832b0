/**
 * `provide(def, impl, { metrics: false })` over real sockets: that service's calls are in neither the
 * Prometheus metrics nor `/stats`; the app's other services are counted as usual.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

interface Ping {
  ping(): Promise<string>;
}

const CountedDef = defineService<Ping>('metrics.Counted', { methods: { ping: {} } });
const QuietDef = defineService<Ping>('metrics.Quiet', { methods: { ping: {} } });
const impl: Ping = { ping: async () => 'pong' };

afterEach(closeAll);

describe('provide() metrics switch', () => {
  it('leaves a service with metrics: false out of the metrics and /stats, counting the others', async () => {
    const provider = await testApp({
      application: 'metrics-switch',
      server: { port: 0 },
      admin: { enabled: true, port: 0 },
    });
    provider.provide(CountedDef, impl).provide(QuietDef, impl, { metrics: false });
    await provider.start();
    const consumer = await testApp({ application: 'metrics-switch-consumer', metrics: false });
    const url = { url: provider.address! };
    for (let i = 0; i < 3; i++) {
      expect(await consumer.refer(CountedDef, url).ping()).toBe('pong');
      expect(await consumer.refer(QuietDef, url).ping()).toBe('pong');
    }
    const text = await provider.metrics();
    expect(text).toMatch(/callisto_calls_total\{[^}]*service="metrics\.Counted"[^}]*\} 3/);
    expect(text).not.toContain('metrics.Quiet');
    const stats = (await (await fetch(`http://127.0.0.1:${provider.adminPort}/stats`)).json()) as {
      methods: Array<{ service: string; side: string }>;
    };
    const services = stats.methods.filter((m) => m.side === 'provider').map((m) => m.service);
    expect(services).toContain('metrics.Counted');
    expect(services).not.toContain('metrics.Quiet');
  });

  it('refuses a metrics option that is not a boolean, naming the key', async () => {
    const app = await testApp();
    expect(() => app.provide(QuietDef, impl, { metrics: 'off' as never })).toThrow(/metrics/);
  });
});

/**
 * A registry address with a password (`redis://host:port?password=…`): the dashboard shows the registry, and
 * why it cannot reach it, without the password, in its answers and in its log lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboard, type Dashboard } from '../../src/dashboard/index.js';
import { type CallistoApp, callisto } from '../../src/index.js';
import { closedPort } from '../cli/support/cli.js';
import { waitFor } from '../support/wait-for.js';
import { rawRequest } from './support/dashboard-env.js';

const PASSWORD = 'pw-s3cret-2026';
let address: string;
let app: CallistoApp;
let dashboard: Dashboard;
const logged: string[] = [];

beforeAll(async () => {
  address = `redis://127.0.0.1:${await closedPort()}?db=0&password=${PASSWORD}`;
  app = await callisto({
    application: 'callisto-dashboard',
    registry: [address],
    consumer: { snapshotDir: '' },
    logLevel: 'silent',
    load: { configFile: false, env: false },
  });
  dashboard = await createDashboard(
    { registries: [address], port: 0, refreshMs: 200 },
    { app, log: (message) => logged.push(message) },
  );
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await app?.close();
});

describe('a registry address with a password', () => {
  it('is shown redacted, with the reason it cannot be reached', async () => {
    const overview = await waitFor(async () => {
      const answer = await rawRequest(dashboard.url, '/api/overview');
      const registries = JSON.parse(answer.body).registries as Array<{ error?: string }>;
      return registries[0]?.error ? answer.body : undefined;
    }, 20_000);
    expect(overview).not.toContain(PASSWORD);
    expect(overview).toContain('password=(hidden)');
    const missing = await rawRequest(dashboard.url, '/api/service?name=shop.Nothing');
    expect(missing.body).not.toContain(PASSWORD);
    expect(logged.join('\n')).not.toContain(PASSWORD);
  });
});

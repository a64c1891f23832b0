/**
 * Callisto's bench client with one routing rule in force (docs/routing.md): the reference follows a
 * file registry of its own, in which this client registers the bench server's address and writes one
 * condition rule, `method = say,getUser & application = bench-client => host = 127.0.0.1` (every call
 * matches it, every provider too: the routing stage runs on every call and changes nothing). Against
 * `callisto` (a direct reference, no rule), what it measures is the cost of one condition rule.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto } from '../../../src/index.js';
import { createRegistry, directProviderRecord } from '../../../src/registry/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchStreamingServiceDef } from '../callisto/service.js';

await runClientMain(async (port) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-bench-routed-'));
  const address = `file://${dir}`;
  const registry = await createRegistry(address, { ttlMs: 60_000 });
  await registry.register({
    ...directProviderRecord(BenchStreamingServiceDef, `127.0.0.1:${port}`),
    methods: ['say', 'getUser', 'ticks'],
    application: 'bench-server',
    pid: process.pid,
    startTime: Date.now() - 3_600_000,
  });
  await registry.updateOverrides!(BenchStreamingServiceDef, (overrides) => ({
    ...overrides,
    routes: [
      {
        name: 'bench',
        kind: 'condition',
        rule: 'method = say,getUser & application = bench-client => host = 127.0.0.1',
      },
    ],
  }));
  const app = await callisto({
    application: 'bench-client',
    registry: [address],
    consumer: { snapshotDir: '', warmupMs: 0 },
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const ref = app.refer(BenchStreamingServiceDef, { timeoutMs: 30_000, registerConsumer: false });
  return {
    say: (msg) => ref.say(msg),
    getUser: (id) => ref.getUser(id),
    ticks: (count) => ref.ticks(count),
    close: async () => {
      await app.close();
      await registry.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

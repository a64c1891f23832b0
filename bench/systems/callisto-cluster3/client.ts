/** The client of the three-provider system: failover + random balancing over three connections. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';

await runClientMain(async (port) => {
  const peers = JSON.parse(
    fs.readFileSync(path.join(os.tmpdir(), `callisto-bench-cluster-${port}.json`), 'utf8'),
  ) as string[];
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
  });
  const ref = app.refer(BenchServiceDef, { url: peers, timeoutMs: 30_000, loadbalance: 'random' });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

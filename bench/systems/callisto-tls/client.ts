/** The callisto client over TLS (`consumer.tls.ca` = the server's CA): the same call path, encrypted. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto } from '../../../src/index.js';
import { runClientMain } from '../../lib/client-main.js';
import { BenchServiceDef } from '../callisto/service.js';

await runClientMain(async (port) => {
  const { ca } = JSON.parse(
    fs.readFileSync(path.join(os.tmpdir(), `callisto-bench-tls-${port}.json`), 'utf8'),
  ) as { ca: string };
  const app = await callisto({
    application: 'bench-client',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    consumer: { tls: { ca, reloadIntervalMs: 0 } },
  });
  const ref = app.refer(BenchServiceDef, { url: `tls://127.0.0.1:${port}`, timeoutMs: 30_000 });
  return { say: (msg) => ref.say(msg), getUser: (id) => ref.getUser(id), close: () => app.close() };
});

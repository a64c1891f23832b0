/**
 * The callisto system over TLS: the same provider with `server.tls`, a certificate for 127.0.0.1 made
 * by the openssl CLI at start (EC P-256, TLS 1.3 as negotiated by default). The CA's file is written
 * to a file named after the port, for the client.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';

export const caFileOf = (port: number) => path.join(os.tmpdir(), `callisto-bench-tls-${port}.json`);

function makeCertificates(dir: string): void {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=bench CA']);
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  ]);
}

await runServerMain(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-bench-tls-'));
  makeCertificates(dir);
  const app = await callisto({
    application: 'bench-server',
    logLevel: 'warn',
    load: { configFile: false, env: false },
    server: {
      tls: { key: path.join(dir, 'server.key'), cert: path.join(dir, 'server.pem'), reloadIntervalMs: 0 },
    },
  });
  app.provide(BenchServiceDef, benchService);
  await app.start();
  const port = app.port!;
  fs.writeFileSync(caFileOf(port), JSON.stringify({ ca: path.join(dir, 'ca.pem') }));
  return {
    port,
    close: async () => {
      await app.close();
      fs.rmSync(caFileOf(port), { force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

/**
 * Three Callisto providers in one server process, for the cost of the cluster layer: the client picks
 * among them on every call. The other two ports are written to a file named after the first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { callisto } from '../../../src/index.js';
import { benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { BenchServiceDef } from '../callisto/service.js';

export const peersFile = (port: number) => path.join(os.tmpdir(), `callisto-bench-cluster-${port}.json`);

await runServerMain(async () => {
  const apps = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const app = await callisto({
        application: `bench-server-${i}`,
        logLevel: 'warn',
        load: { configFile: false, env: false },
      });
      app.provide(BenchServiceDef, benchService);
      return app.start();
    }),
  );
  const port = apps[0]!.port!;
  fs.writeFileSync(peersFile(port), JSON.stringify(apps.map((app) => app.address)));
  return {
    port,
    close: async () => {
      fs.rmSync(peersFile(port), { force: true });
      await Promise.all(apps.map((app) => app.close()));
    },
  };
});

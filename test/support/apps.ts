import { type AppOptions, type CallistoApp, callisto } from '../../src/index.js';

const QUIET: AppOptions = { logLevel: 'silent', load: { configFile: false, env: false } };

/** An app with test defaults: no config file, no env, silent. Closed by `closeAll`. */
export async function testApp(options: AppOptions = {}): Promise<CallistoApp> {
  const app = await callisto({ ...QUIET, ...options, load: { ...QUIET.load, ...options.load } });
  opened.push(app);
  return app;
}

const opened: CallistoApp[] = [];

export async function closeAll(): Promise<void> {
  const apps = opened.splice(0);
  await Promise.all(apps.map((app) => app.close()));
}

/** Counts of handles that must not survive a test: sockets, servers, timers. */
export function resourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) {
    if (name === 'TCPSocketWrap' || name === 'TCPServerWrap' || name === 'Timeout') {
      counts[name] = (counts[name] ?? 0) + 1;
    }
  }
  return counts;
}

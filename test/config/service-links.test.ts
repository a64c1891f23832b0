/**
 * Kubernetes service links: the variables Kubernetes puts into every pod for the Services `callisto`
 * and `callisto-admin` of its namespace do not stop an app. They are ignored with one info line naming
 * them and the fix; a real key's name with a service link's value (`CALLISTO_ADMIN_PORT=tcp://…`) is
 * ignored with a warning. An unknown `CALLISTO_*` variable still fails when it is a near miss of a real
 * one, and is otherwise ignored with one warning (another tool's `CALLISTO_DIR`). A real app in a child
 * process with these variables in its environment, and apps given them through `load.env`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, type Logger } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

/** What Kubernetes sets for a Service `callisto` (port 20880, named `rpc`) at 10.96.0.10. */
const CALLISTO_SERVICE = {
  CALLISTO_SERVICE_HOST: '10.96.0.10',
  CALLISTO_SERVICE_PORT: '20880',
  CALLISTO_SERVICE_PORT_RPC: '20880',
  CALLISTO_PORT: 'tcp://10.96.0.10:20880',
  CALLISTO_PORT_20880_TCP: 'tcp://10.96.0.10:20880',
  CALLISTO_PORT_20880_TCP_PROTO: 'tcp',
  CALLISTO_PORT_20880_TCP_PORT: '20880',
  CALLISTO_PORT_20880_TCP_ADDR: '10.96.0.10',
};

/** …and for a Service `callisto-admin` (port 9464) at 10.96.0.12: CALLISTO_ADMIN_PORT is a real key. */
const ADMIN_SERVICE = {
  CALLISTO_ADMIN_SERVICE_HOST: '10.96.0.12',
  CALLISTO_ADMIN_SERVICE_PORT: '9464',
  CALLISTO_ADMIN_PORT: 'tcp://10.96.0.12:9464',
  CALLISTO_ADMIN_PORT_9464_TCP: 'tcp://10.96.0.12:9464',
  CALLISTO_ADMIN_PORT_9464_TCP_PROTO: 'tcp',
  CALLISTO_ADMIN_PORT_9464_TCP_PORT: '9464',
  CALLISTO_ADMIN_PORT_9464_TCP_ADDR: '10.96.0.12',
};

/** A logger keeping its lines. */
function recorder(): Logger & { lines: Array<[string, string]> } {
  const lines: Array<[string, string]> = [];
  const keep = (level: string) => (message: string) => {
    lines.push([level, message]);
  };
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

const FIXTURE = new URL('./fixtures/env-provider.ts', import.meta.url).pathname;

/** Runs the provider fixture with `env` on top of a clean environment (no CALLISTO_* of ours). */
async function runProvider(env: Record<string, string>) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('CALLISTO_') && !key.startsWith('VITEST')),
  );
  const run = promisify(execFile)(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...base, ...env },
    timeout: 30_000,
  });
  try {
    const { stdout, stderr } = await run;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('Kubernetes service links', () => {
  it('a real app starts and serves with the service links of Services callisto and callisto-admin in its environment', async () => {
    const result = await runProvider({ ...CALLISTO_SERVICE, ...ADMIN_SERVICE });
    expect(result.stdout, result.stderr).toMatch(/^READY \d+ echo:k8s admin=0 server=0\n$/);
    expect(result.code).toBe(0);
    const lines = result.stderr.trimEnd().split('\n');
    const info = lines.filter((line) => line.includes('service-link variables'));
    expect(info).toHaveLength(1);
    const links = Object.keys({ ...CALLISTO_SERVICE, ...ADMIN_SERVICE }).filter(
      (name) => name !== 'CALLISTO_ADMIN_PORT',
    );
    expect(info[0]).toBe(
      `[callisto] info: ignored ${links.length} Kubernetes service-link variables (${[...links].sort().join(', ')}): Kubernetes sets these for every Service whose name starts with "callisto"; set enableServiceLinks: false in the pod spec to stop them`,
    );
    expect(lines.filter((line) => line.includes('CALLISTO_ADMIN_PORT=tcp'))).toEqual([
      '[callisto] warn: ignored CALLISTO_ADMIN_PORT=tcp://10.96.0.12:9464: it is the Kubernetes service link of the Service "callisto-admin", not a value of admin.port (which keeps its value from the other sources); Kubernetes sets these for every Service whose name starts with "callisto"; set enableServiceLinks: false in the pod spec to stop them, or rename the Service',
    ]);
  }, 40_000);

  it('the same variables through load.env: one info line, one warning, the real keys keep their values', async () => {
    const logger = recorder();
    const app = await testApp({
      logger,
      admin: { port: 0 },
      server: { port: 7001 },
      load: {
        env: {
          ...CALLISTO_SERVICE,
          ...ADMIN_SERVICE,
          // a Service `callisto-server` (UDP too) lands on server.port's name
          CALLISTO_SERVER_PORT: 'udp://10.96.0.13:7000',
          CALLISTO_SERVER_PORT_7000_UDP: 'udp://10.96.0.13:7000',
          CALLISTO_SERVER_SERVICE_HOST: 'fd00::13',
          CALLISTO_CONSUMER_RETRIES: '4',
        },
      },
    });
    expect(app.config.server.port).toBe(7001);
    expect(app.config.admin.port).toBe(0);
    expect(app.config.consumer.retries).toBe(4);
    expect(logger.lines.filter(([level]) => level === 'info')).toHaveLength(1);
    expect(logger.lines.find(([level]) => level === 'info')![1]).toMatch(
      /^ignored 16 Kubernetes service-link variables \(CALLISTO_ADMIN_PORT_9464_TCP, .*CALLISTO_SERVER_PORT_7000_UDP, CALLISTO_SERVER_SERVICE_HOST, CALLISTO_SERVICE_HOST, CALLISTO_SERVICE_PORT, CALLISTO_SERVICE_PORT_RPC\): .*enableServiceLinks: false/,
    );
    const warnings = logger.lines.filter(([level]) => level === 'warn').map(([, message]) => message);
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).toMatch(
      /ignored CALLISTO_ADMIN_PORT=tcp:\/\/10\.96\.0\.12:9464: .*"callisto-admin"/,
    );
    expect(warnings.join('\n')).toMatch(
      /ignored CALLISTO_SERVER_PORT=udp:\/\/10\.96\.0\.13:7000: .*"callisto-server"/,
    );
  });

  it('a variable with a service link name but not its value is no service link: a near miss still fails', async () => {
    for (const [name, value, meant] of [
      ['CALLISTO_SERVICE_HOST', 'orders.internal', 'CALLISTO_SERVER_HOST'],
      ['CALLISTO_CONSUMER_TIMEOUT', '5', 'CALLISTO_CONSUMER_TIMEOUT_MS'],
      ['CALLISTO_ADVERTISE_HOST', '10.0.0.1', 'CALLISTO_SERVER_ADVERTISE_HOST'],
    ] as const) {
      const error = await testApp({ load: { env: { ...CALLISTO_SERVICE, [name]: value } } }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, name).toBeInstanceOf(ConfigError);
      expect(error).toMatchObject({ key: name, unknownKey: true, suggestion: meant });
    }
    // a real key's name with a plain value is that key, not a service link
    const app = await testApp({ load: { env: { CALLISTO_ADMIN_PORT: '9464' } } });
    expect(app.config.admin.port).toBe(9464);
  });

  it("another tool's CALLISTO_DIR is ignored with one warning, not a ConfigError", async () => {
    const logger = recorder();
    const app = await testApp({
      logger,
      load: { env: { CALLISTO_DIR: '/opt/callisto-bench', CALLISTO_BENCH_OUT: 'x' } },
    });
    expect(app.config.consumer.snapshotDir).toBe('.callisto/snapshots');
    expect(logger.lines).toEqual([
      [
        'warn',
        "ignored unknown variables CALLISTO_BENCH_OUT, CALLISTO_DIR (did you mean CALLISTO_CONSUMER_SNAPSHOT_DIR?): not configuration (the CALLISTO_ prefix is reserved for the variables listed in docs/configuration.md; rename a tool's own variables)",
      ],
    ]);
    // and in a real process with it in its environment
    const result = await runProvider({ CALLISTO_DIR: '/opt/callisto-bench' });
    expect(result.stdout, result.stderr).toMatch(/^READY /);
    expect(result.stderr.match(/ignored unknown variable CALLISTO_DIR/g)).toHaveLength(1);
  }, 40_000);
});

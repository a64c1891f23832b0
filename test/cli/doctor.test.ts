/**
 * `callisto doctor`, the built binary, on the file registry: a healthy registry (every provider answers
 * a real heartbeat, with its round trip, and every service on it its `$echo`), and each thing it must find and say in plain words: a bad
 * record, a provider that died (SIGKILL: its entry outlives it), a listener that is not Callisto, one
 * that never answers (bounded by --timeout), consumers without a provider, an unreachable registry; a
 * provider serving TLS only, probed over TLS with the consumer's TLS options (config or --tls-* flags).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { makePki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import {
  buildCli,
  type CliBuild,
  closedPort,
  jsonOf,
  type ProviderProcess,
  runCli,
  show,
  startProvider,
} from './support/cli.js';
import { consumerEntry, providerEntry, writeEntry } from './support/file-records.js';

let cli: CliBuild;
let provider: ProviderProcess;
const dirs: string[] = [];
const servers: net.Server[] = [];

const tempRegistry = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-doctor-'));
  dirs.push(dir);
  return dir;
};

let healthy: string;

beforeAll(async () => {
  healthy = tempRegistry();
  [cli, provider] = await Promise.all([
    buildCli(),
    startProvider({ registry: `file://${healthy}`, application: 'users' }),
  ]);
}, 120_000);

afterAll(async () => {
  await provider?.stop();
  for (const server of servers) server.close();
  cli?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A TCP server on a free port doing `onConnection` with each socket. */
async function listener(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer(onConnection);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

const doctor = (args: string[]) => runCli(cli, ['doctor', ...args]);

const Echo = defineService<{ echo(text: string): Promise<string> }>('cli.Echo', { methods: { echo: {} } });

describe('callisto doctor', () => {
  it('a healthy registry: reachable, readable, every provider answers a heartbeat; exit 0', async () => {
    const result = await doctor(['--registry', `file://${healthy}`]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`doctor: file://${healthy}`);
    expect(lines[1]).toMatch(
      new RegExp(`^  ok    registry file://${healthy} reachable, connected in [\\d.]+ ms$`),
    );
    expect(lines[2]).toBe('  ok    layout readable: 1 service key, 1 provider entry, 0 consumer entries');
    expect(lines[3]).toMatch(
      new RegExp(
        `^  ok    ${provider.address} answered a heartbeat in [\\d.]+ ms \\(cli\\.UserService 1\\.0\\.0; users, pid ${provider.pid}\\)$`,
      ),
    );
    // and the service itself answers, through the provider's filters ($echo, not business code)
    expect(lines[4]).toMatch(
      new RegExp(
        `^  ok    cli\\.UserService 1\\.0\\.0 at ${provider.address} answered \\$echo in [\\d.]+ ms$`,
      ),
    );
    expect(lines[5]).toBe('everything looks fine');
    const json = jsonOf(await doctor(['--registry', `file://${healthy}`, '--json']));
    expect(json).toMatchObject({ ok: true, problems: 0, registry: `file://${healthy}` });
    const probe = (json['checks'] as Array<Record<string, unknown>>).find((c) => c['check'] === 'provider')!;
    expect(probe).toMatchObject({ ok: true, address: provider.address });
    expect(probe['rttMs']).toBeGreaterThan(0);
    expect(probe['rttMs']).toBeLessThan(5_000);
  });

  it('finds bad records, a dead provider, a listener that is not Callisto and consumers without a provider; exit 1', async () => {
    const dir = tempRegistry();
    const registry = `file://${dir}`;
    const dead = await startProvider({ registry, application: 'ghost' });
    await dead.kill(); // SIGKILL: its entry stays until the TTL
    const bad = writeEntry(dir, 'cli.Broken:1.0.0', 'providers', 'bad', providerEntry('cli.Broken', 70_000));
    const http = await listener((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    writeEntry(dir, 'cli.Web:1.0.0', 'providers', `127.0.0.1:${http}`, providerEntry('cli.Web', http));
    writeEntry(dir, 'cli.Orders:1.0.0', 'consumers', 'web-1:777', consumerEntry('cli.Orders'));

    const result = await doctor(['--registry', registry]);
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr).toBe('');
    const text = result.stdout;
    expect(text).toContain('  ok    layout readable: 4 service keys, 3 provider entries, 1 consumer entry\n');
    expect(text).toContain(
      `  FAIL  bad record, skipped by every consumer: registry ${registry}: skipped provider entry ${bad}: port 70000 is not an integer from 1 to 65535\n`,
    );
    expect(text).toContain(
      `  FAIL  ${dead.address} (cli.UserService 1.0.0; ghost, pid ${dead.pid}): connection refused: nothing listens there`,
    );
    expect(text).toContain(
      `  FAIL  127.0.0.1:${http} (cli.Web 1.0.0; by-hand, pid 4242): answered with bytes that are not Callisto frames (another program listens there)\n`,
    );
    expect(text).toContain(
      '  FAIL  cli.Orders 1.0.0: 1 consumer (web) and no provider: their calls fail with NoProvider\n',
    );
    expect(text.trimEnd().split('\n').at(-1)).toBe('4 problems found');
    const json = jsonOf(await doctor(['--registry', registry, '--json']));
    expect(json).toMatchObject({ ok: false, problems: 4 });
    expect(
      (json['checks'] as Array<{ check: string; ok: boolean }>)
        .filter((c) => !c.ok)
        .map((c) => c.check)
        .sort(),
    ).toEqual(['consumers', 'provider', 'provider', 'record']);
  });

  it("a provider that answers its heartbeat but not a service its record names: the service's $echo fails; exit 1", async () => {
    const dir = tempRegistry();
    const [host, port] = provider.address.split(':');
    // a record naming cli.Ghost at the healthy provider's address, which serves cli.UserService only
    writeEntry(dir, 'cli.Ghost:1.0.0', 'providers', provider.address, {
      ...providerEntry('cli.Ghost', Number(port)),
      host,
    });
    const result = await doctor(['--registry', `file://${dir}`, '--timeout', '2000']);
    expect(result.code, show(result)).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`  ok    ${provider.address} answered a heartbeat in`));
    expect(result.stdout).toMatch(
      new RegExp(`  FAIL  cli\\.Ghost 1\\.0\\.0 at ${provider.address} does not answer \\$echo: \\w+`),
    );
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('1 problem found');
  });

  it('a provider that accepts but never answers: reported after --timeout, not waited for', async () => {
    const dir = tempRegistry();
    const sockets: net.Socket[] = [];
    const silent = await listener((socket) => sockets.push(socket)); // reads nothing, says nothing
    writeEntry(
      dir,
      'cli.Stuck:1.0.0',
      'providers',
      `127.0.0.1:${silent}`,
      providerEntry('cli.Stuck', silent),
    );
    const result = await doctor(['--registry', `file://${dir}`, '--timeout', '800']);
    for (const socket of sockets) socket.destroy();
    expect(result.code, show(result)).toBe(1);
    expect(result.stdout).toContain(
      `  FAIL  127.0.0.1:${silent} (cli.Stuck 1.0.0; by-hand, pid 4242): connected, but no answer to a heartbeat within 800 ms (the process is stuck or overloaded)\n`,
    );
    expect(result.ms).toBeLessThan(15_000);
  });

  it('an unreachable registry: says so, exit 3', async () => {
    const port = await closedPort();
    const result = await doctor(['--registry', `redis://127.0.0.1:${port}`, '--timeout', '1000']);
    expect(result.code, show(result)).toBe(3);
    expect(result.stdout).toMatch(
      new RegExp(
        `^doctor: redis://127\\.0\\.0\\.1:${port}\\n  FAIL  cannot reach the registry redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; check that its server runs at that address\\n1 problem found\\n$`,
      ),
    );
    expect(result.stderr).toBe('');
  });

  it('a provider serving TLS only: probed over TLS with --tls-ca or consumer.tls, OK and exit 0; without them, the fix', async () => {
    const pki = makePki();
    try {
      const dir = tempRegistry();
      const registry = `file://${dir}`;
      const tlsProvider = await testApp({
        application: 'secure',
        registry,
        server: { port: 0, host: '127.0.0.1', tls: { key: pki.server.key, cert: pki.server.cert } },
      });
      tlsProvider.provide(Echo, { echo: (text) => text });
      await tlsProvider.start();
      const address = tlsProvider.address!;
      expect(address).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);

      const flags = await doctor(['--registry', registry, '--tls-ca', pki.ca]);
      expect(flags.code, show(flags)).toBe(0);
      expect(flags.stdout).toMatch(
        new RegExp(
          `  ok    ${address.replace(/\./g, '\\.')} answered a heartbeat in [\\d.]+ ms \\(cli\\.Echo 1\\.0\\.0; secure, pid ${process.pid}\\)\n`,
        ),
      );
      expect(flags.stdout.trimEnd().split('\n').at(-1)).toBe('everything looks fine');

      const config = path.join(dir, 'callisto.config.yaml');
      writeFileSync(config, `consumer:\n  tls:\n    ca: ${pki.ca}\n`);
      const fromConfig = await doctor(['--registry', registry, '--config', config, '--json']);
      expect(fromConfig.code, show(fromConfig)).toBe(0);
      expect(jsonOf(fromConfig)).toMatchObject({ ok: true, problems: 0 });

      const without = await doctor(['--registry', registry]);
      expect(without.code, show(without)).toBe(1);
      expect(without.stdout).toContain(
        `  FAIL  ${address} (cli.Echo 1.0.0; secure, pid ${process.pid}): provider ${address} serves TLS only and this consumer has no TLS configuration: set consumer.tls.ca`,
      );
      expect(without.stdout).toContain('(or pass --tls-ca <file>)');

      // mutual TLS: the client certificate of --tls-cert and --tls-key
      const mtlsProvider = await testApp({
        application: 'mutual',
        registry: `file://${path.join(dir, 'mtls')}`,
        server: {
          port: 0,
          host: '127.0.0.1',
          tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true },
        },
      });
      mtlsProvider.provide(Echo, { echo: (text) => text });
      await mtlsProvider.start();
      const mtlsRegistry = ['--registry', `file://${path.join(dir, 'mtls')}`, '--tls-ca', pki.ca];
      const mutual = await doctor([
        ...mtlsRegistry,
        '--tls-cert',
        pki.orders.cert,
        '--tls-key',
        pki.orders.key,
      ]);
      expect(mutual.code, show(mutual)).toBe(0);
      const noCert = await doctor(mtlsRegistry);
      expect(noCert.code, show(noCert)).toBe(1);
      expect(noCert.stdout).toMatch(
        /FAIL {2}tls:\/\/127\.0\.0\.1:\d+ \(cli\.Echo 1\.0\.0; mutual, pid \d+\): TLS handshake with .* the provider requires a client certificate \(mutual TLS\)/,
      );

      const missing = await doctor(['--registry', registry, '--tls-ca', path.join(dir, 'nope.pem')]);
      expect(missing.code, show(missing)).toBe(2);
      expect(missing.stderr).toContain(`--tls-ca ${path.join(dir, 'nope.pem')}: cannot read it (ENOENT)`);

      // a CA that did not sign the provider's certificate: a TLS failure in words, not "not Callisto"
      const wrongCa = await doctor(['--registry', registry, '--tls-ca', pki.otherCa]);
      expect(wrongCa.code, show(wrongCa)).toBe(1);
      expect(wrongCa.stdout).toMatch(/FAIL {2}tls:\/\/.*TLS handshake with tls:\/\/127\.0\.0\.1:\d+ failed/);
    } finally {
      await closeAll();
      pki.remove();
    }
  });

  it('an empty registry has nothing wrong', async () => {
    const result = await doctor(['--registry', `file://${tempRegistry()}`]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toContain(
      'layout readable: 0 service keys, 0 provider entries, 0 consumer entries',
    );
  });
});

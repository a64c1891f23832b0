/**
 * Moleculer, as the overload benchmark's O3 compares Callisto with it: loaded from bench/peers (its own
 * package.json and lockfile, installed there on first use: `npm ci --ignore-scripts`), apart from the
 * project, whose ioredis 6 Moleculer 0.14's optional peer range does not take. Both processes use its
 * TCP transporter with static addresses (no UDP discovery): the server node on `serverPort`, the
 * client node on `clientPort`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const peersDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../peers');

export interface MoleculerPorts {
  readonly serverPort: number;
  readonly clientPort: number;
}

/** What the benchmark uses of Moleculer's `ServiceBroker`. */
export interface Broker {
  start(): Promise<void>;
  stop(): Promise<void>;
  createService(schema: {
    name: string;
    actions: Record<string, (ctx: { params: Record<string, unknown> }) => unknown>;
  }): void;
  call(action: string, params?: Record<string, unknown>, options?: { timeout?: number }): Promise<unknown>;
  waitForServices(names: string[], timeout?: number): Promise<void>;
}

type BrokerClass = new (options: Record<string, unknown>) => Broker;

/** Installs bench/peers when its node_modules is missing (npm, no install scripts). */
export function ensurePeersInstalled(): void {
  if (fs.existsSync(path.join(peersDir, 'node_modules', 'moleculer'))) return;
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: peersDir,
    stdio: 'inherit',
  });
}

/** A broker named `node` on its port of `ports`, with the benchmark's options (and `extra`). */
export function moleculerBroker(
  node: 'server' | 'client',
  ports: MoleculerPorts,
  extra: Record<string, unknown> = {},
): Broker {
  const require = createRequire(path.join(peersDir, 'package.json'));
  const { ServiceBroker } = require('moleculer') as { ServiceBroker: BrokerClass };
  return new ServiceBroker({
    nodeID: node,
    logger: false,
    transporter: {
      type: 'TCP',
      options: {
        udpDiscovery: false,
        port: node === 'server' ? ports.serverPort : ports.clientPort,
        urls: [`127.0.0.1:${ports.serverPort}/server`, `127.0.0.1:${ports.clientPort}/client`],
      },
    },
    ...extra,
  });
}

/** The ports of the two nodes, from BENCH_MOLECULER_PORTS (`server,client`). */
export function portsFromEnv(): MoleculerPorts {
  const [serverPort, clientPort] = (process.env['BENCH_MOLECULER_PORTS'] ?? '').split(',').map(Number);
  if (!serverPort || !clientPort)
    throw new Error('BENCH_MOLECULER_PORTS must be "<server port>,<client port>"');
  return { serverPort, clientPort };
}

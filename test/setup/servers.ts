/**
 * Real registry servers for tests: etcd, ZooKeeper and Redis, each started on free ports in a fresh
 * temporary directory, waited for until it serves, and stopped, killed or restarted (same port, same data
 * directory, optionally wiped) on demand. Binaries come from Debian packages installed by
 * scripts/services/install.sh.
 *
 * The global setup starts one of each for the whole run; a test that stops or restarts a server (outage
 * tests) starts its own private instance here so parallel suites are not disturbed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export { freePort };

export type ServerKind = 'etcd' | 'zookeeper' | 'redis';

export const SERVER_KINDS: readonly ServerKind[] = ['etcd', 'zookeeper', 'redis'];

export interface TestServer {
  readonly kind: ServerKind;
  readonly host: string;
  readonly port: number;
  /** `host:port` clients connect to. */
  readonly address: string;
  /** The registry address, e.g. `etcd://127.0.0.1:40123`. */
  readonly url: string;
  /** The temporary directory holding config, data and the log. */
  readonly dir: string;
  readonly running: boolean;
  /** Graceful stop (SIGTERM, SIGKILL after 5 s); resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL; resolves once the process has exited. */
  kill(): Promise<void>;
  /** Stops if running, then starts again on the same port; `wipeData` starts from an empty data dir. */
  restart(options?: { wipeData?: boolean }): Promise<void>;
  /** Stops and deletes the temporary directory. Idempotent. */
  close(): Promise<void>;
}

export const INSTALL_HINT =
  'run `bash scripts/services/install.sh` (Debian: etcd-server, zookeeper, redis-server)';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;

function which(binary: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '')
    .split(':')
    .concat(['/usr/bin', '/usr/sbin', '/usr/local/bin'])) {
    const candidate = join(dir, binary);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The ZooKeeper server classpath (Debian layout, a tarball under ZOOKEEPER_HOME), or undefined. */
function zookeeperClasspath(): string | undefined {
  const home = process.env['ZOOKEEPER_HOME'];
  const candidates = [
    '/usr/share/java/zookeeper.jar',
    ...(home ? [join(home, 'lib')] : []),
    '/usr/share/zookeeper/lib',
  ];
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    if (candidate.endsWith('.jar')) {
      const logger = ['/usr/share/java/slf4j-simple.jar', '/usr/share/java/slf4j-nop.jar'].find(existsSync);
      return [candidate, ...(logger ? [logger] : [])].join(':');
    }
    return `${candidate}/*`;
  }
  return undefined;
}

/** Whether the server of `kind` can be started on this machine. */
export function isServerInstalled(kind: ServerKind): boolean {
  if (kind === 'etcd') return which('etcd') !== undefined;
  if (kind === 'redis') return which('redis-server') !== undefined;
  return which('java') !== undefined && zookeeperClasspath() !== undefined;
}

interface ServerSpec {
  command: string;
  args: string[];
  /** Writes config files into the data directory before each start. */
  prepare?: () => void;
  /** Resolves true once the server serves requests. */
  probe: () => Promise<boolean>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Sends `payload` on a fresh connection and collects the reply until the peer closes or `done` says so. */
function tcpExchange(port: number, payload: string, done: (reply: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect({ host: HOST, port });
    const finish = (): void => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(1_000, finish);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (done(reply)) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

function httpOk(port: number, path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: HOST, port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
      res.on('error', () => resolve(undefined));
    });
    req.setTimeout(1_000, () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

async function specFor(kind: ServerKind, dir: string, port: number): Promise<ServerSpec> {
  const data = join(dir, 'data');
  if (kind === 'redis') {
    return {
      command: which('redis-server') ?? 'redis-server',
      args: ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir],
      prepare: () => mkdirSync(data, { recursive: true }),
      probe: async () => (await tcpExchange(port, 'PING\r\n', (r) => r.includes('\r\n'))).startsWith('+PONG'),
    };
  }
  if (kind === 'etcd') {
    const peerPort = await freePort();
    const peer = `http://${HOST}:${peerPort}`;
    const client = `http://${HOST}:${port}`;
    return {
      command: which('etcd') ?? 'etcd',
      args: [
        ...['--name', 'test', '--data-dir', data],
        ...['--listen-client-urls', client, '--advertise-client-urls', client],
        ...['--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer],
        ...['--initial-cluster', `test=${peer}`, '--log-level', 'warn', '--logger', 'zap'],
      ],
      probe: async () => (await httpOk(port, '/health'))?.includes('"health":"true"') ?? false,
    };
  }
  const classpath = zookeeperClasspath();
  if (!classpath) throw new Error(`ZooKeeper jars not found: ${INSTALL_HINT}`);
  const cfg = join(dir, 'zoo.cfg');
  return {
    command: which('java') ?? 'java',
    args: [
      ...['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto'],
      ...['-Dzookeeper.admin.enableServer=false', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
      ...['-cp', classpath, 'org.apache.zookeeper.server.ZooKeeperServerMain', cfg],
    ],
    prepare: () => {
      mkdirSync(data, { recursive: true });
      writeFileSync(
        cfg,
        [
          'tickTime=500',
          `dataDir=${data}`,
          `clientPort=${port}`,
          `clientPortAddress=${HOST}`,
          'minSessionTimeout=1000',
          'maxSessionTimeout=60000',
          'maxClientCnxns=0',
          'admin.enableServer=false',
          '4lw.commands.whitelist=*',
          'preAllocSize=1024',
          'forceSync=no',
          '',
        ].join('\n'),
      );
    },
    probe: async () => (await tcpExchange(port, 'srvr', () => false)).includes('Mode: standalone'),
  };
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a server of `kind` on free ports in a fresh temporary directory and waits until it serves. */
export async function startServer(kind: ServerKind): Promise<TestServer> {
  if (!isServerInstalled(kind)) throw new Error(`${kind} is not installed: ${INSTALL_HINT}`);
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), `callisto-${kind}-`));
  const port = await freePort();
  const spec = await specFor(kind, dir, port);
  const logFile = join(dir, 'server.log');
  let child: ChildProcess | undefined;
  let closed = false;

  const launch = async (): Promise<void> => {
    spec.prepare?.();
    const fd = openSync(logFile, 'a');
    const started = spawn(spec.command, spec.args, { cwd: dir, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child = started;
    running.add(started);
    started.once('exit', () => running.delete(started));
    started.once('error', () => running.delete(started));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (started.exitCode !== null || started.signalCode !== null) break;
      if (await spec.probe()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    started.kill('SIGKILL');
    await waitExit(started);
    throw new Error(`${kind} did not start on port ${port} (log ${logFile}):\n${logTail(logFile)}`);
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    child = undefined;
    if (!current) return;
    const exited = waitExit(current);
    current.kill(signal);
    const escalate = setTimeout(() => current.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(escalate);
  };

  try {
    await launch();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  return {
    kind,
    host: HOST,
    port,
    address: `${HOST}:${port}`,
    url: `${kind}://${HOST}:${port}`,
    dir,
    get running() {
      return child !== undefined;
    },
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    async restart(options = {}) {
      if (closed) throw new Error(`${kind} test server is closed`);
      await halt('SIGTERM');
      if (options.wipeData) rmSync(join(dir, 'data'), { recursive: true, force: true });
      await launch();
    },
    async close() {
      if (closed) return;
      closed = true;
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const startEtcd = (): Promise<TestServer> => startServer('etcd');
export const startZooKeeper = (): Promise<TestServer> => startServer('zookeeper');
export const startRedis = (): Promise<TestServer> => startServer('redis');

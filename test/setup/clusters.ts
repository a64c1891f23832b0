/**
 * Replicated registry servers for tests, from the Debian packages scripts/services/install.sh installs:
 *
 * - a 3-member etcd cluster (`etcd`, raft: heartbeat 100 ms, election timeout 1500 ms),
 * - a 3-server ZooKeeper ensemble (`QuorumPeerMain`, tickTime 500 ms),
 * - Redis: a primary, a replica and 3 Sentinels (`redis-server`, `redis-sentinel`, quorum 2,
 *   down-after 1000 ms).
 *
 * Each member runs on its own namespaced host when `hosts` are given (its own address, the engine's
 * standard ports: etcd://10.213.K.2:2379,10.213.K.3:2379,...), else on 127.0.0.1 with free ports. Every
 * cluster lives in a fresh temporary directory, is started by the test that needs it, tells which member
 * leads now, and is closed (every process stopped, the directory deleted) by the test.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ClusterMember,
  createMember,
  httpBody,
  type MemberHost,
  redisCommand,
  tcpExchange,
} from './cluster-member.js';
import { freePort, INSTALL_HINT } from './servers.js';

export type { ClusterMember, MemberHost } from './cluster-member.js';

export interface RegistryCluster {
  readonly kind: 'etcd' | 'zookeeper' | 'redis-sentinel';
  /** The members clients talk to (etcd members, ZooKeeper servers, or for Redis the sentinels). */
  readonly members: readonly ClusterMember[];
  /** For Redis: the data servers (primary first at start); empty otherwise. */
  readonly servers: readonly ClusterMember[];
  /** The registry address naming every member, e.g. `etcd://h1:2379,h2:2379,h3:2379`. */
  readonly url: string;
  /** The member (for Redis: the data server) that leads now, asked from the running members. */
  leader(): Promise<ClusterMember | undefined>;
  /** Waits until a running member leads (optionally: another than `not`), and returns it. */
  waitForLeader(options?: { not?: ClusterMember; timeoutMs?: number }): Promise<ClusterMember>;
  readonly dir: string;
  /** Stops every member and deletes the directory. Idempotent. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Namespaced hosts, one member each; omitted: loopback with free ports. */
  hosts?: readonly MemberHost[];
  /** Members (etcd only; default 3). */
  size?: number;
}

function placements(options: ClusterOptions, count: number): Array<{ ip: string; host?: MemberHost }> {
  if (options.hosts && options.hosts.length < count) {
    throw new Error(`a cluster of ${count} needs ${count} hosts, got ${options.hosts.length}`);
  }
  return Array.from({ length: count }, (_, i) => {
    const host = options.hosts?.[i];
    return host ? { ip: host.address, host } : { ip: '127.0.0.1' };
  });
}

async function portFor(options: ClusterOptions, standard: number): Promise<number> {
  return options.hosts ? standard : await freePort();
}

function clusterOf(
  kind: RegistryCluster['kind'],
  dir: string,
  members: ClusterMember[],
  servers: ClusterMember[],
  url: string,
  isLeader: (member: ClusterMember) => Promise<boolean>,
): RegistryCluster {
  let closed = false;
  const candidates = servers.length > 0 ? servers : members;
  const leader = async (): Promise<ClusterMember | undefined> => {
    for (const member of candidates) if (member.running && (await isLeader(member))) return member;
    return undefined;
  };
  return {
    kind,
    members,
    servers,
    url,
    dir,
    leader,
    async waitForLeader({ not, timeoutMs = 30_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const current = await leader();
        if (current && current !== not) return current;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`no ${kind} leader${not ? ` other than ${not.name}` : ''} after ${timeoutMs} ms`);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...members, ...servers].map((member) => member.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startAll(cluster: RegistryCluster): Promise<RegistryCluster> {
  try {
    await Promise.all([...cluster.servers, ...cluster.members].map((member) => member.start()));
    return cluster;
  } catch (error) {
    await cluster.close();
    throw error;
  }
}

/** A 3-member etcd cluster (or `size` members). */
export async function startEtcdCluster(options: ClusterOptions = {}): Promise<RegistryCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-etcd-cluster-'));
  const token = `callisto-${process.pid}-${Date.now()}`;
  const placed = placements(options, options.size ?? 3);
  const ports = await Promise.all(
    placed.map(async () => ({ client: await portFor(options, 2379), peer: await portFor(options, 2380) })),
  );
  const peerUrl = (i: number) => `http://${placed[i]!.ip}:${ports[i]!.peer}`;
  const initial = placed.map((_, i) => `m${i + 1}=${peerUrl(i)}`).join(',');
  const members = placed.map((place, i) => {
    const name = `m${i + 1}`;
    const client = `http://${place.ip}:${ports[i]!.client}`;
    return createMember({
      name: `etcd ${name}`,
      ip: place.ip,
      port: ports[i]!.client,
      host: place.host,
      command: '/usr/bin/etcd',
      args: [
        ...['--name', name, '--data-dir', join(dir, name)],
        ...['--listen-client-urls', client, '--advertise-client-urls', client],
        ...['--listen-peer-urls', peerUrl(i), '--initial-advertise-peer-urls', peerUrl(i)],
        ...['--initial-cluster', initial, '--initial-cluster-state', 'new', '--initial-cluster-token', token],
        ...['--heartbeat-interval', '100', '--election-timeout', '1500'],
        ...['--log-level', 'warn', '--logger', 'zap'],
      ],
      cwd: dir,
      logFile: join(dir, `${name}.log`),
      // a member answers /health only once the cluster has a leader
      probe: async () =>
        (await httpBody(place.ip, ports[i]!.client, '/health'))?.includes('"health":"true"') ?? false,
    });
  });
  const url = `etcd://${members.map((member) => member.address).join(',')}`;
  const isLeader = async (member: ClusterMember): Promise<boolean> => {
    const status = await httpBody(member.ip, member.port, '/v3/maintenance/status', '{}');
    if (!status) return false;
    const parsed = JSON.parse(status) as { header?: { member_id?: string }; leader?: string };
    return parsed.leader !== undefined && parsed.header?.member_id === parsed.leader;
  };
  return startAll(clusterOf('etcd', dir, members, [], url, isLeader));
}

const ZK_CLASSPATH = '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar';

/** A 3-server ZooKeeper ensemble (tickTime 500 ms: sessions from 1 s to 60 s). */
export async function startZooKeeperEnsemble(options: ClusterOptions = {}): Promise<RegistryCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-zk-ensemble-'));
  const placed = placements(options, 3);
  const ports = await Promise.all(
    placed.map(async () => ({
      client: await portFor(options, 2181),
      quorum: await portFor(options, 2888),
      election: await portFor(options, 3888),
    })),
  );
  const serverLines = placed.map(
    (place, i) => `server.${i + 1}=${place.ip}:${ports[i]!.quorum}:${ports[i]!.election}`,
  );
  const mode = async (member: ClusterMember): Promise<string> =>
    /Mode: (\w+)/.exec(await tcpExchange(member.ip, member.port, 'srvr'))?.[1] ?? '';
  const members = placed.map((place, i) => {
    const name = `zk${i + 1}`;
    const data = join(dir, name);
    const cfg = join(dir, `${name}.cfg`);
    return createMember({
      name: `zookeeper ${name}`,
      ip: place.ip,
      port: ports[i]!.client,
      host: place.host,
      command: '/usr/bin/java',
      args: [
        ...['-Xmx192m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto'],
        ...['-Dzookeeper.admin.enableServer=false', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
        ...['-cp', ZK_CLASSPATH, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', cfg],
      ],
      cwd: dir,
      logFile: join(dir, `${name}.log`),
      prepare: () => {
        mkdirSync(data, { recursive: true });
        writeFileSync(join(data, 'myid'), `${i + 1}\n`);
        writeFileSync(
          cfg,
          [
            'tickTime=500',
            'initLimit=20',
            'syncLimit=5',
            `dataDir=${data}`,
            `clientPort=${ports[i]!.client}`,
            `clientPortAddress=${place.ip}`,
            ...serverLines,
            'minSessionTimeout=1000',
            'maxSessionTimeout=60000',
            'maxClientCnxns=0',
            'admin.enableServer=false',
            '4lw.commands.whitelist=*',
            'preAllocSize=1024',
            'forceSync=no',
            'standaloneEnabled=false',
            'reconfigEnabled=false',
            '',
          ].join('\n'),
        );
      },
      probe: async () =>
        /^(leader|follower)$/.test(await mode({ ip: place.ip, port: ports[i]!.client } as ClusterMember)),
    });
  });
  const url = `zookeeper://${members.map((member) => member.address).join(',')}`;
  return startAll(clusterOf('zookeeper', dir, members, [], url, async (m) => (await mode(m)) === 'leader'));
}

/** The Sentinel master name the Redis cluster uses. */
export const SENTINEL_MASTER = 'callisto';

/** Redis primary (host 1) + replica (host 2) + 3 sentinels (hosts 1-3, quorum 2, down-after 1000 ms). */
export async function startRedisSentinel(options: ClusterOptions = {}): Promise<RegistryCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-redis-sentinel-'));
  const placed = placements(options, 3);
  const dataPorts = await Promise.all(placed.slice(0, 2).map(() => portFor(options, 6379)));
  const sentinelPorts = await Promise.all(placed.map(() => portFor(options, 26379)));
  const primary = placed[0]!;
  const servers = placed.slice(0, 2).map((place, i) => {
    const name = i === 0 ? 'redis-a' : 'redis-b';
    const port = dataPorts[i]!;
    return createMember({
      name,
      ip: place.ip,
      port,
      host: place.host,
      command: '/usr/bin/redis-server',
      args: [
        ...['--port', String(port), '--bind', place.ip, '--save', '', '--appendonly', 'no'],
        ...['--dir', dir, '--dbfilename', `${name}.rdb`, '--protected-mode', 'no'],
        // replicas sync at once (the default waits 5 s for more replicas before the first sync)
        ...['--repl-diskless-sync-delay', '0'],
        ...(i === 0 ? [] : ['--replicaof', primary.ip, String(dataPorts[0])]),
      ],
      cwd: dir,
      logFile: join(dir, `${name}.log`),
      probe: async () => (await redisCommand(place.ip, port, 'PING')).startsWith('+PONG'),
    });
  });
  const sentinels = placed.map((place, i) => {
    const name = `sentinel-${i + 1}`;
    const port = sentinelPorts[i]!;
    const conf = join(dir, `${name}.conf`);
    return createMember({
      name,
      ip: place.ip,
      port,
      host: place.host,
      command: '/usr/bin/redis-sentinel',
      args: [conf],
      cwd: dir,
      logFile: join(dir, `${name}.log`),
      // Sentinel rewrites its file as it learns the topology: write it once, keep it across restarts
      prepare: () => {
        try {
          writeFileSync(
            conf,
            [
              `port ${port}`,
              `bind ${place.ip}`,
              'protected-mode no',
              `dir ${dir}`,
              `sentinel monitor ${SENTINEL_MASTER} ${primary.ip} ${dataPorts[0]} 2`,
              `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
              `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
              `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
              '',
            ].join('\n'),
            { flag: 'wx' },
          );
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      },
      probe: async () =>
        (
          await redisCommand(place.ip, port, 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER)
        ).startsWith('*2'),
    });
  });
  const url = `redis-sentinel://${sentinels.map((s) => s.address).join(',')}/${SENTINEL_MASTER}`;
  const isPrimary = async (member: ClusterMember): Promise<boolean> =>
    /role:master/.test(await redisCommand(member.ip, member.port, 'INFO', 'replication'));
  const cluster = clusterOf('redis-sentinel', dir, sentinels, servers, url, isPrimary);
  try {
    // the primary first, so the replica and the sentinels find it
    await servers[0]!.start();
    await Promise.all([servers[1]!.start(), ...sentinels.map((s) => s.start())]);
    await waitUntil(
      async () =>
        /master_link_status:up/.test(
          await redisCommand(servers[1]!.ip, servers[1]!.port, 'INFO', 'replication'),
        ),
      'the replica is in sync with the primary',
    );
    // a failover needs every sentinel to know the replica (learnt from the primary's INFO, every 10 s
    // at first) and the other sentinels (hello messages every 2 s)
    await waitUntil(async () => {
      const known = await Promise.all(
        sentinels.map(async (s) => {
          const replicas = await redisCommand(s.ip, s.port, 'SENTINEL', 'replicas', SENTINEL_MASTER);
          const peers = await redisCommand(s.ip, s.port, 'SENTINEL', 'sentinels', SENTINEL_MASTER);
          return replicas.startsWith('*1\r\n') && peers.startsWith(`*${sentinels.length - 1}\r\n`);
        }),
      );
      return known.every(Boolean);
    }, 'every sentinel knows the replica and the other sentinels');
    return cluster;
  } catch (error) {
    await cluster.close();
    throw error;
  }
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`test cluster not ready after ${timeoutMs} ms: ${what}`);
}

export { INSTALL_HINT };

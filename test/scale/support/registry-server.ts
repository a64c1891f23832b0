/**
 * The registry of a scale run: one server of the engine on a namespaced host (its address, the engine's
 * standard port), or for `file` a directory; with its pid, to read its CPU and memory from /proc.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMember, type MemberHost, redisCommand, tcpExchange } from '../../setup/cluster-member.js';
import { startEtcdCluster } from '../../setup/clusters.js';

export type ScaleEngine = 'file' | 'etcd' | 'zookeeper' | 'redis';

export interface ScaleRegistry {
  readonly engine: ScaleEngine;
  readonly url: string;
  /** The server process, when there is one. */
  pid(): number | undefined;
  close(): Promise<void>;
}

export async function startScaleRegistry(engine: ScaleEngine, host: MemberHost): Promise<ScaleRegistry> {
  if (engine === 'file') {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-scale-file-'));
    return {
      engine,
      url: `file://${dir}/registry`,
      pid: () => undefined,
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (engine === 'etcd') {
    const cluster = await startEtcdCluster({ hosts: [host], size: 1 });
    return { engine, url: cluster.url, pid: () => cluster.members[0]!.pid, close: () => cluster.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), `callisto-scale-${engine}-`));
  const member =
    engine === 'redis'
      ? createMember({
          name: 'redis',
          ip: host.address,
          port: 6379,
          host,
          command: '/usr/bin/redis-server',
          args: [
            ...['--port', '6379', '--bind', host.address, '--protected-mode', 'no'],
            ...['--save', '', '--appendonly', 'no', '--dir', dir],
          ],
          cwd: dir,
          logFile: join(dir, 'redis.log'),
          probe: async () => (await redisCommand(host.address, 6379, 'PING')).startsWith('+PONG'),
        })
      : createMember({
          name: 'zookeeper',
          ip: host.address,
          port: 2181,
          host,
          command: '/usr/bin/java',
          args: [
            ...['-Xmx1g', '-XX:+UseParallelGC', '-Dzookeeper.admin.enableServer=false'],
            ...['-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
            ...['-cp', '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar'],
            ...['org.apache.zookeeper.server.ZooKeeperServerMain', join(dir, 'zoo.cfg')],
          ],
          cwd: dir,
          logFile: join(dir, 'zookeeper.log'),
          prepare: () => {
            mkdirSync(join(dir, 'data'), { recursive: true });
            writeFileSync(
              join(dir, 'zoo.cfg'),
              [
                'tickTime=500',
                `dataDir=${join(dir, 'data')}`,
                'clientPort=2181',
                `clientPortAddress=${host.address}`,
                'minSessionTimeout=1000',
                'maxSessionTimeout=60000',
                'maxClientCnxns=0',
                'admin.enableServer=false',
                '4lw.commands.whitelist=*',
                'forceSync=no',
                '',
              ].join('\n'),
            );
          },
          probe: async () => (await tcpExchange(host.address, 2181, 'srvr')).includes('Mode: standalone'),
        });
  try {
    await member.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = `${engine}://${host.address}:${member.port}`;
  return {
    engine,
    url,
    pid: () => member.pid,
    async close() {
      await member.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

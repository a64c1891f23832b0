/**
 * What keeps a provider registration alive on each engine, read with the engine's own client: the etcd
 * lease its key is attached to, the ZooKeeper session that owns its ephemeral node, or for Redis that
 * the key exists (and its remaining TTL). The same identity before and after a leader change means the
 * registration was never lost and re-created.
 */
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import type { ZkModule, ZkStat } from '../../../src/registry/zookeeper-session.js';
import type { RegistryCluster } from '../../setup/clusters.js';

/** node-zookeeper-client ships no types: imported by a specifier TypeScript does not resolve. */
const ZOOKEEPER_CLIENT = 'node-zookeeper-client';

export interface Identity {
  /** Lease id (etcd), session id (ZooKeeper, hex), or 'present' (Redis); undefined when the entry is gone. */
  owner: string | undefined;
}

export async function registrationIdentities(
  cluster: RegistryCluster,
  keys: readonly string[],
): Promise<Identity[]> {
  const live = cluster.members.filter((member) => member.running);
  if (cluster.kind === 'etcd') {
    const client = new Etcd3({ hosts: live.map((member) => `http://${member.address}`) });
    try {
      return await Promise.all(
        keys.map(async (key) => {
          const response = await client.get(key).exec();
          const kv = response.kvs[0];
          return { owner: kv ? String(kv.lease) : undefined };
        }),
      );
    } finally {
      client.close();
    }
  }
  if (cluster.kind === 'zookeeper') {
    const zk = ((await import(ZOOKEEPER_CLIENT)) as { default: ZkModule }).default;
    const client = zk.createClient(live.map((member) => member.address).join(','), {
      sessionTimeout: 5_000,
      spinDelay: 200,
      retries: 3,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('ZooKeeper did not answer')), 15_000);
        client.on('state', (state) => {
          if (state.code !== zk.State.SYNC_CONNECTED.code) return;
          clearTimeout(timer);
          resolve();
        });
        client.connect();
      });
      return await Promise.all(
        keys.map(
          (key) =>
            new Promise<Identity>((resolve, reject) =>
              client.getData(key, undefined, (error, _data, stat?: ZkStat) => {
                if (error && error.code === zk.Exception.NO_NODE) resolve({ owner: undefined });
                else if (error) reject(error);
                else resolve({ owner: stat?.ephemeralOwner.toString('hex') });
              }),
            ),
        ),
      );
    } finally {
      client.close();
    }
  }
  const master = /\/([^/?]+)/.exec(cluster.url.slice('redis-sentinel://'.length))?.[1] ?? '';
  const client = new Redis({
    sentinels: live.map((member) => ({ host: member.ip, port: member.port })),
    name: master,
    lazyConnect: true,
    maxRetriesPerRequest: 3,
  });
  try {
    await client.connect();
    return await Promise.all(
      keys.map(async (key) => ({ owner: (await client.pttl(key)) > 0 ? 'present' : undefined })),
    );
  } finally {
    client.disconnect();
  }
}

/**
 * The override record on ZooKeeper (`<root>/<seg>/config`, a PERSISTENT node with the JSON as data:
 * it outlives every session), read with its node version and changed with compare-and-set: `setData`
 * and `remove` with the version read, `create` when it was absent (NODE_EXISTS: another writer created
 * it first). BAD_VERSION, NODE_EXISTS and NO_NODE (removed meanwhile) are conflicts: false, nothing
 * written.
 */
import type { StoredConfig } from './registry-shell.js';
import { type ZkModule, type ZkSession, zkErrorCode } from './zookeeper-session.js';

/** The version of a record node that does not exist. */
const ABSENT = 'absent';

export async function readZkConfig(zk: ZkModule, s: ZkSession, path: string): Promise<StoredConfig> {
  try {
    const [data, stat] = await s.runWithStat<Buffer | null>((cb) => s.client.getData(path, undefined, cb));
    return { value: data ?? undefined, version: String(stat?.version ?? 0) };
  } catch (error) {
    if (zkErrorCode(error) === zk.Exception.NO_NODE) return { value: undefined, version: ABSENT };
    throw error;
  }
}

export async function writeZkConfig(
  zk: ZkModule,
  s: ZkSession,
  path: string,
  value: string | undefined,
  version: string,
): Promise<boolean> {
  const { NO_NODE, NODE_EXISTS, BAD_VERSION } = zk.Exception;
  const conflict = (error: unknown): boolean => {
    const code = zkErrorCode(error);
    if (code === BAD_VERSION || code === NODE_EXISTS || code === NO_NODE) return false;
    throw error;
  };
  if (version === ABSENT) {
    if (value === undefined) return true; // nothing to remove: read() was the moment of the change
    const data = Buffer.from(value);
    const create = () => s.run<string>((cb) => s.client.create(path, data, zk.CreateMode.PERSISTENT, cb));
    try {
      await create();
      return true;
    } catch (error) {
      if (zkErrorCode(error) !== NO_NODE) return conflict(error);
    }
    // the service's node does not exist yet
    await s.run<string>((cb) => s.client.mkdirp(path.slice(0, path.lastIndexOf('/')), cb));
    return create().then(() => true, conflict);
  }
  const expected = Number(version);
  if (value === undefined) {
    return s.run<void>((cb) => s.client.remove(path, expected, cb)).then(() => true, conflict);
  }
  return s.run((cb) => s.client.setData(path, Buffer.from(value), expected, cb)).then(() => true, conflict);
}

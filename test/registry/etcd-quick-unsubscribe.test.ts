/**
 * An etcd subscription dropped right after its first list (before its watcher connected) must not hold
 * up the subscriptions after it nor count as a failure of the registry: the gateway does exactly this
 * for a service nobody provides. (Before the fix, the next subscription waited for the 5 s watch
 * timeout and the registry went through a recovery.)
 */
import { expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/index.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { waitFor } from '../support/wait-for.js';

it('etcd: a subscription dropped at once does not stall the next one', async () => {
  const registry = await createRegistry(`etcd://${sharedServerAddress('etcd')}`, { ttlMs: 10_000 });
  const errors: string[] = [];
  registry.onStatus(() => {
    if (registry.lastError !== undefined) errors.push(registry.lastError);
  });
  try {
    for (let i = 0; i < 3; i++) {
      const unsubscribe = await registry.subscribe(
        { name: `quick.Dropped${i}`, version: '1', group: '' },
        () => {},
      );
      unsubscribe();
    }
    // the watch timeout is 5 s (ttlMs / 2, at most 5 s): the stall this guards against took that long
    const started = Date.now();
    const unsubscribe = await registry.subscribe({ name: 'quick.Kept', version: '1', group: '' }, () => {});
    expect(Date.now() - started).toBeLessThan(4_000);
    await waitFor(() => registry.status === 'connected', 20_000);
    expect(errors).toEqual([]);
    expect(registry.lastError).toBeUndefined();
    unsubscribe();
  } finally {
    await registry.close();
  }
});

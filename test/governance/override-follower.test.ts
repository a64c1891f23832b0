/**
 * The override follower (src/registry/registry-overrides.ts) with a scripted store: listeners told once
 * per change, a failing read keeping the last overrides, and no read sent while the registry is
 * disconnected after the first one (a client that queues commands offline would pile them up).
 */
import { afterEach, expect, it } from 'vitest';
import { emptyOverrides, type ServiceOverrides } from '../../src/registry/override-record.js';
import { createOverrideFollower, type OverrideFollower } from '../../src/registry/registry-overrides.js';
import { waitFor } from '../support/wait-for.js';

const KEY = { name: 'test.Followed', version: '1.0.0', group: '' };
const followers: OverrideFollower[] = [];
afterEach(() => {
  for (const follower of followers.splice(0)) follower.close();
});

function scripted() {
  const store = { value: undefined as string | undefined, fail: false, reads: 0, connected: true };
  const follower = createOverrideFollower({
    read: async () => {
      store.reads++;
      if (store.fail) throw new Error('server away');
      return { value: store.value, version: String(store.value) };
    },
    write: async (_segment, value, version) => {
      if (version !== String(store.value)) return false;
      store.value = value;
      return true;
    },
    pollMs: 10,
    timeoutMs: 1_000,
    location: (segment) => `/callisto/${segment}/config`,
    log: () => {},
    ensureOpen: () => {},
    connected: () => store.connected,
  });
  followers.push(follower);
  return { store, follower };
}

it('tells a change once, and keeps the last overrides through failed reads', async () => {
  const { store, follower } = scripted();
  const seen: ServiceOverrides[] = [];
  await follower.watch(KEY, (overrides) => seen.push(overrides));
  expect(seen).toEqual([emptyOverrides()]);
  await follower.write(KEY, { ...emptyOverrides(), disabled: true });
  await waitFor(() => seen.length === 2);
  store.fail = true;
  const reads = store.reads;
  await waitFor(() => store.reads > reads + 3);
  store.fail = false;
  await waitFor(() => store.reads > reads + 6);
  expect(seen.map((overrides) => overrides.disabled)).toEqual([false, true]);
});

it('sends no read while disconnected after the first, and catches up once connected', async () => {
  const { store, follower } = scripted();
  store.connected = false;
  const seen: boolean[] = [];
  await follower.watch(KEY, (overrides) => seen.push(overrides.disabled));
  expect(store.reads).toBe(1);
  store.value = JSON.stringify({ disabled: true });
  // twenty poll periods with the server away: nothing is sent
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(store.reads).toBe(1);
  store.connected = true;
  await waitFor(() => seen.at(-1) === true);
});

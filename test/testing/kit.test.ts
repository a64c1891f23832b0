/**
 * The test kit (`callisto/testing`): providers and consumers on an in-memory network and registry, with
 * no socket, the same filters and cluster as over TCP, and failures injected on demand (error codes,
 * latency, a provider down), deterministically.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineFilter, RpcError, withOptions } from '../../src/index.js';
import { createTestKit, type TestKit } from '../../src/testing/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { resourceCounts } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const kits: TestKit[] = [];
afterEach(async () => {
  await Promise.all(kits.splice(0).map((kit) => kit.close()));
});

function kit(...args: Parameters<typeof createTestKit>): TestKit {
  const made = createTestKit(...args);
  kits.push(made);
  return made;
}

const sockets = () => {
  const counts = resourceCounts();
  return (counts.TCPSocketWrap ?? 0) + (counts.TCPServerWrap ?? 0);
};

describe('test kit', () => {
  it('serves typed calls from provider implementations found through its registry, with no socket', async () => {
    const before = sockets();
    const k = kit();
    const users = await k.provider(UserServiceDef, new UserServiceImpl());
    const app = await k.consumer();
    const ref = app.refer(UserServiceDef);
    expect(await ref.getUser(7)).toMatchObject({ id: 7, createdAt: new Date(1_700_000_000_007) });
    await expect(ref.withdraw(5)).rejects.toMatchObject({ code: 'ProviderError', details: { balance: 10 } });
    await expect(ref.register('x', -1)).rejects.toMatchObject({ code: 'BadRequest' });
    expect(users.address).toMatch(/^memory:\/\//);
    expect(users.calls.map((call) => call.method)).toEqual(['getUser', 'withdraw', 'register']);
    expect(sockets()).toBe(before);
  });

  it('injects error codes for a number of calls; the cluster fails over as over TCP', async () => {
    const k = kit();
    const first = await k.provider(FlakyDef, new FlakyImpl('a'), { name: 'a' });
    const second = await k.provider(FlakyDef, new FlakyImpl('b'), { name: 'b' });
    const app = await k.consumer();
    // the balancer's plain turns (effective weights would rightly send a, which just failed, fewer calls)
    const ref = app.refer(FlakyDef, { outlierDetection: false, effectiveWeight: false });
    first.fail('read', 'Overloaded', { times: 2 });
    const answers: string[] = [];
    for (const key of ['1', '2', '3', '4', '5']) answers.push(await ref.read(key));
    // a refuses 1 and 3 (its two faults), b answers them; the balancer's turn comes back to a for 5
    expect(answers).toEqual(['b:1', 'b:2', 'b:3', 'b:4', 'a:5']);
    expect(first.calls.map((call) => call.args[0])).toEqual(['1', '3', '5']);
    // a business error is never retried; a non-idempotent call is not retried after it may have run
    second.fail('*', 'ProviderError');
    first.fail('write', 'Timeout');
    await expect(ref.write('w')).rejects.toMatchObject({ code: 'Timeout', remote: true });
    first.heal();
    second.heal();
    expect(await ref.write('w2')).toMatch(/^[ab]:w2$/);
  });

  it('delays answers, and holds a call forever until its deadline passes', async () => {
    const k = kit();
    const slow = await k.provider(FlakyDef, new FlakyImpl('slow'));
    const app = await k.consumer();
    const ref = app.refer(FlakyDef, { timeoutMs: 200, retries: 0 });
    slow.delay('read', 50, { times: 1 });
    expect(await ref.read('late')).toBe('slow:late');
    slow.delay('read', 'forever');
    const started = Date.now();
    await expect(ref.read('never')).rejects.toMatchObject({ code: 'Timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    // held calls go on when healed
    const held = app.refer(FlakyDef, { timeoutMs: 0 }).read('held');
    await waitFor(() => slow.calls.some((call) => call.args[0] === 'held'));
    slow.heal();
    expect(await held).toBe('slow:held');
  });

  it('takes a provider down (connections refused, still listed) and back up at the same address', async () => {
    const k = kit();
    const only = await k.provider(FlakyDef, new FlakyImpl('only'));
    const app = await k.consumer();
    const ref = app.refer(FlakyDef, { retries: 0 });
    expect(await ref.read('a')).toBe('only:a');
    await only.down();
    const error = (await ref.read('b').catch((e: unknown) => e)) as RpcError;
    expect(RpcError.is(error) && error.code).toBe('Network');
    // still listed: a consumer that starts now finds it in the registry, and cannot connect
    const late = await k.consumer();
    await expect(late.refer(FlakyDef, { retries: 0 }).read('b')).rejects.toMatchObject({ code: 'Network' });
    await only.up();
    await waitFor(async () => (await ref.read('c').catch(() => 'down')) === 'only:c', 10_000);
    await only.stop();
    await waitFor(async () => (await ref.read('d').catch((e: RpcError) => e.code)) === 'NoProvider', 10_000);
  });

  it('runs the app’s filters and cluster: a per-attempt filter sees each provider tried', async () => {
    const k = kit();
    const a = await k.provider(FlakyDef, new FlakyImpl('a'), { name: 'a' });
    const b = await k.provider(FlakyDef, new FlakyImpl('b'), { name: 'b' });
    const tried: string[] = [];
    const app = await k.consumer({
      filters: {
        consumer: [
          defineFilter({
            name: 'tap',
            position: 'attempt',
            start: (invocation) => tried.push(invocation.remoteAddress!),
          }),
        ],
      },
    });
    a.fail('read', 'Overloaded');
    expect(await app.refer(FlakyDef).read('x')).toBe('b:x');
    expect(tried).toEqual([a.address, b.address]);
  });

  it('keeps kits apart, and closes without leaving timers', async () => {
    const before = resourceCounts().Timeout ?? 0;
    // a shutdown deadline far beyond the test's own timeout: the kit must not wait for it
    const one = createTestKit({ shutdownTimeoutMs: 120_000 });
    const two = createTestKit();
    const held = await one.provider(FlakyDef, new FlakyImpl('one'));
    const app = await two.consumer();
    await expect(app.refer(FlakyDef, { timeoutMs: 500 }).read('x')).rejects.toMatchObject({
      code: 'NoProvider',
    });
    // a call held forever does not hold up the kit's close
    held.delay('read', 'forever');
    const oneApp = await one.consumer();
    void oneApp
      .refer(FlakyDef, { timeoutMs: 0 })
      .read('x')
      .catch(() => undefined);
    await waitFor(() => held.calls.length === 1);
    await Promise.all([one.close(), two.close()]);
    expect(one.network.listeners + two.network.listeners).toBe(0);
    await waitFor(() => (resourceCounts().Timeout ?? 0) <= before, 5_000);
  });

  it('silences a provider like a partition: the consumer suspects it and retries reads elsewhere; what was held arrives at speak', async () => {
    const k = kit();
    const a = await k.provider(FlakyDef, new FlakyImpl('a'), { name: 'a' });
    const b = await k.provider(FlakyDef, new FlakyImpl('b'), { name: 'b' });
    const app = await k.consumer();
    const ref = app.refer(FlakyDef, { outlierDetection: false });
    expect([await ref.read('1'), await ref.read('2')]).toEqual(['a:1', 'b:2']);
    a.silence();
    const started = Date.now();
    // roundrobin: 3 goes to the silent a, 4 to b, then the write to a (held there)
    const reads = Promise.all([ref.read('3'), ref.read('4')]);
    const write = withOptions(ref, { timeoutMs: 1_500 }).write('w');
    // the connection to a is suspected after consumer.suspectAfterMs (1 s): the read retried on b
    expect(await reads).toEqual(['b:3', 'b:4']);
    expect(Date.now() - started).toBeLessThan(2_500);
    // a non-idempotent call is left waiting (it may be running), and never sent elsewhere
    await expect(write).rejects.toMatchObject({ code: 'Timeout' });
    expect(b.calls.filter((call) => call.method === 'write')).toEqual([]);
    a.speak();
    // what was sent while silent reaches a now: the held write runs there, once
    await waitFor(() => a.calls.some((call) => call.method === 'write'));
    expect(a.calls.filter((call) => call.method === 'write')).toHaveLength(1);
  });
});

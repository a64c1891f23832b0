/**
 * A caller that gives up tells the provider (the `cancel` event, docs/protocol.md): the handler's
 * `callContext().signal` fires, so it can stop, and no answer is sent for the call; the caller's error
 * keeps the abort reason as its cause. Forking cancels the providers that lost. A handler that rejects
 * with its signal's reason at the deadline answers Timeout, not ProviderError. Over TCP.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/rpc-error.js';
import { callContext, defineService, type RpcError, withOptions } from '../../src/index.js';
import { EventName, FrameKind } from '../../src/protocol/frame.js';
import { EMPTY_BODY } from '../../src/protocol/frame-writer.js';
import { encodeRoutePrefix } from '../../src/protocol/metadata.js';
import { closeAll, testApp } from '../support/apps.js';
import { msgpack } from '../support/raw-client.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

interface Waiter {
  /** Waits for its signal (or 20 s), resolves with what ended the wait. */
  wait(tag: string): Promise<string>;
}
const WaiterDef = defineService<Waiter>('test.Waiter', { methods: { wait: { idempotent: true } } });

/**
 * A provider whose handler waits for its signal (tags `now` and `fail` answer at once, with a value or
 * an error); what each call's signal said, by tag.
 */
async function waitingProvider(name = 'p', transport: 'tcp' | 'memory' = 'tcp') {
  const aborted = new Map<string, unknown>();
  const started: string[] = [];
  const app = await testApp({ application: name, server: { transport } });
  app.provide(WaiterDef, {
    wait(tag) {
      if (tag === 'now') return Promise.resolve(`${name}:now`);
      if (tag === 'fail') return Promise.reject(new Error('failed at once'));
      const signal = callContext()!.signal!;
      started.push(tag);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve(`${name}:${tag}:done`), 20_000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          aborted.set(tag, signal.reason);
          reject(signal.reason);
        });
      });
    },
  });
  await app.start();
  return { app, aborted, started, address: app.address! };
}

describe('cancelling a call', () => {
  it("fires the provider handler's signal when the caller aborts, and keeps the abort reason as the cause", async () => {
    const provider = await waitingProvider();
    const consumer = await testApp();
    const waiter = consumer.refer(WaiterDef, { url: provider.address, timeoutMs: 30_000 });
    const controller = new AbortController();
    const call = withOptions(waiter, { signal: controller.signal }).wait('a');
    await waitFor(() => provider.started.includes('a'));
    const reason = new Error('the user left the page');
    controller.abort(reason);
    const error = (await call.catch((e: unknown) => e)) as RpcError;
    expect(error).toMatchObject({ code: 'Cancelled' });
    expect(error.cause).toBe(reason);
    // the provider learnt it: its handler's signal fired (well before its 20 s), with a Cancelled reason
    await waitFor(() => provider.aborted.has('a'), 5_000);
    expect(provider.aborted.get('a')).toMatchObject({ code: 'Cancelled' });
  });

  it('sends no answer for a call cancelled on the wire', async () => {
    const provider = await waitingProvider();
    const raw = await rawFrameSocket(provider.address);
    try {
      raw.request(7, 'test.Waiter', 'wait', ['raw']);
      await waitFor(() => provider.started.includes('raw'));
      raw.writer.event(EventName.Cancel, 0, EMPTY_BODY, 7);
      await waitFor(() => provider.aborted.has('raw'), 5_000);
      raw.ping(99);
      const frames = await raw.until((frame) => frame.kind === FrameKind.Heartbeat && frame.requestId === 99);
      expect(frames.filter((frame) => frame.kind === FrameKind.Response)).toEqual([]);
    } finally {
      raw.close();
    }
  });

  it('forking cancels the providers that lost, on the providers too', async () => {
    const slow = await waitingProvider('slow');
    const fast = await testApp({ application: 'fast' });
    fast.provide(WaiterDef, { wait: (tag) => `fast:${tag}` });
    await fast.start();
    const consumer = await testApp();
    const waiter = consumer.refer(WaiterDef, {
      url: [slow.address, fast.address!],
      cluster: 'forking',
      forks: 2,
      timeoutMs: 30_000,
    });
    expect(await waiter.wait('f')).toBe('fast:f');
    await waitFor(() => slow.aborted.has('f'), 5_000);
    expect(slow.aborted.get('f')).toMatchObject({ code: 'Cancelled' });
  });
});

describe('deadlines on the provider', () => {
  it("answers Timeout when the handler rejects with its signal's reason at the deadline", async () => {
    const provider = await waitingProvider();
    // A raw peer has no deadline of its own: what it gets is the provider's answer alone.
    const raw = await rawFrameSocket(provider.address);
    try {
      const route = encodeRoutePrefix('test.Waiter', '1.0.0', '', 'wait');
      raw.writer.request({
        requestId: 3,
        flags: 0,
        serializer: msgpack.id,
        routePrefix: route,
        timeoutMs: 150,
        attachments: undefined,
        body: msgpack.encode(['deadline']),
      });
      const frames = await raw.until((frame) => frame.kind === FrameKind.Response && frame.requestId === 3);
      expect(frames.at(-1)!.status).toBe(ErrorCode.Timeout);
    } finally {
      raw.close();
    }
    expect(provider.aborted.get('deadline')).toMatchObject({ code: 'Timeout' });
    // and a typed caller gets Timeout too
    const consumer = await testApp();
    const waiter = consumer.refer(WaiterDef, { url: provider.address, timeoutMs: 150 });
    await expect(waiter.wait('typed')).rejects.toMatchObject({ code: 'Timeout' });
  });
});

describe.each(['tcp', 'memory'] as const)("a caller's signal over %s", (transport) => {
  it('keeps no listener of a connection once its calls ended: answered, failed, timed out, cancelled', async () => {
    const provider = await waitingProvider('p', transport);
    const consumer = await testApp();
    const waiter = consumer.refer(WaiterDef, { url: provider.address, timeoutMs: 30_000, retries: 0 });
    const shared = new AbortController();
    const withSignal = withOptions(waiter, { signal: shared.signal });
    const answers = await Promise.all(Array.from({ length: 50 }, () => withSignal.wait('now')));
    expect(answers[49]).toBe('p:now');
    await expect(withSignal.wait('fail')).rejects.toMatchObject({ code: 'ProviderError' });
    await expect(
      withOptions(waiter, { signal: shared.signal, timeoutMs: 100 }).wait('slow'),
    ).rejects.toMatchObject({
      code: 'Timeout',
    });
    const other = new AbortController();
    const cancelled = withOptions(waiter, { signal: other.signal }).wait('cancelled');
    await waitFor(() => provider.started.includes('cancelled'));
    other.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'Cancelled' });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    // and the shared signal still works for the next call
    const next = withSignal.wait('last');
    await waitFor(() => provider.started.includes('last'));
    shared.abort();
    await expect(next).rejects.toMatchObject({ code: 'Cancelled' });
    await waitFor(() => provider.aborted.has('last'), 5_000);
  });
});

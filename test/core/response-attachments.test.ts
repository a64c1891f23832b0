/**
 * Response attachments (docs/protocol.md, "Response: an attachment block"): a provider filter and the
 * handler set `invocation.responseAttachments`; they travel back with the answer, a result or an error,
 * and the consumer's filters see them on their invocation once the call returned. Over TCP, and
 * in-process the same.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Attachments, callContext, defineService, type Filter } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

interface Stamped {
  ok(n: number): Promise<number>;
  fail(n: number): Promise<number>;
}
const StampedDef = defineService<Stamped>('test.Stamped', { methods: { ok: {}, fail: {} } });

/** A provider filter that stamps every answer with the provider's name. */
const stamp =
  (name: string): Filter =>
  (next) =>
  (invocation) => {
    invocation.responseAttachments!.servedBy = name;
    return next(invocation);
  };

const implementation: Stamped = {
  async ok(n) {
    callContext()!.responseAttachments!.square = String(n * n);
    return n;
  },
  async fail(n) {
    callContext()!.responseAttachments!.reason = `odd ${n}`;
    throw new RangeError(`no ${n}`);
  },
};

/** A consumer filter that keeps what each call's answer carried. */
function recorder(): { filter: Filter; seen: Attachments[] } {
  const seen: Attachments[] = [];
  const filter: Filter = (next) => async (invocation) => {
    try {
      return await next(invocation);
    } finally {
      seen.push({ ...invocation.responseAttachments });
    }
  };
  return { filter, seen };
}

describe('response attachments', () => {
  it('travel back with results and errors over TCP, and consumer filters see them', async () => {
    const provider = await testApp({ filters: { provider: [stamp('p1')] } });
    provider.provide(StampedDef, implementation);
    await provider.start();
    const { filter, seen } = recorder();
    const consumer = await testApp({ filters: { consumer: [filter] } });
    const ref = consumer.refer(StampedDef, { url: provider.address! });
    expect(await ref.ok(3)).toBe(3);
    await expect(ref.fail(5)).rejects.toMatchObject({ code: 'ProviderError', message: 'no 5' });
    expect(seen).toEqual([
      { servedBy: 'p1', square: '9' },
      { servedBy: 'p1', reason: 'odd 5' },
    ]);
  });

  it('are the same for an in-process call', async () => {
    const { filter, seen } = recorder();
    const app = await testApp({ filters: { provider: [stamp('local')], consumer: [filter] } });
    app.provide(StampedDef, implementation);
    const ref = app.refer(StampedDef);
    expect(await ref.ok(4)).toBe(4);
    await expect(ref.fail(1)).rejects.toMatchObject({ code: 'ProviderError' });
    expect(seen).toEqual([
      { servedBy: 'local', square: '16' },
      { servedBy: 'local', reason: 'odd 1' },
    ]);
  });
});

/**
 * What a nested call inherits from the call being served (consumer/hop-context.ts), piece by piece:
 * the deadline less the margin (only when sooner than its own), the served signal beside its own, the
 * tag, the baggage within its bounds (16 keys, 4096 bytes), the trace (the served call's trace id, or
 * the one derived from its call id, valid W3C), the retry marker; nothing else, nothing of a call that
 * ended, and each piece switched off on its own. And the trace ids derived from call ids.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONSUMER_CONFIG } from '../../src/consumer/consumer-options.js';
import {
  type HopPolicy,
  hopPolicyOf,
  inherit,
  MAX_INHERITED_BAGGAGE_BYTES,
  MAX_INHERITED_BAGGAGE_KEYS,
} from '../../src/consumer/hop-context.js';
import type { Invocation } from '../../src/core/invocation.js';
import { newCallId } from '../../src/observability/call-id.js';
import { parseTraceparent, traceIdOfCallId } from '../../src/observability/trace-context.js';

const POLICY = hopPolicyOf(DEFAULT_CONSUMER_CONFIG)!;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

function served(init: Partial<Invocation> & { ended?: boolean } = {}): Invocation {
  return {
    service: { name: 's.S', version: '', group: '' },
    method: 'm',
    args: [],
    attachments: {},
    deadline: 0,
    signal: undefined,
    oneway: false,
    idempotent: true,
    callId: 'abcdefghij-1f',
    ...init,
  } as Invocation;
}

const own = { attachments: {}, timeoutMs: 3_000, signal: undefined };

describe('inherit', () => {
  it('takes the remaining deadline less the margin when it is sooner than the call’s own timeout', () => {
    const remaining = inherit(served({ deadline: Date.now() + 300 }), own, POLICY).timeoutMs;
    expect(remaining).toBeLessThanOrEqual(300 - POLICY.marginMs);
    expect(remaining).toBeGreaterThan(200);
    expect(inherit(served({ deadline: Date.now() + 60_000 }), own, POLICY).timeoutMs).toBe(3_000);
    expect(
      inherit(served({ deadline: Date.now() + 300 }), { ...own, timeoutMs: 0 }, POLICY).timeoutMs,
    ).toBeLessThan(300);
    // a deadline already gone leaves 1 ms: the call fails Timeout at once instead of running unbounded
    expect(inherit(served({ deadline: Date.now() - 10 }), own, POLICY).timeoutMs).toBe(1);
  });

  it('listens to the served signal beside its own', () => {
    const servedAbort = new AbortController();
    const mine = new AbortController();
    const alone = inherit(served({ signal: servedAbort.signal }), own, POLICY).signal;
    expect(alone).toBe(servedAbort.signal);
    const both = inherit(served({ signal: servedAbort.signal }), { ...own, signal: mine.signal }, POLICY)
      .signal!;
    expect(both.aborted).toBe(false);
    servedAbort.abort(new Error('caller gone'));
    expect(both.aborted).toBe(true);
  });

  it('inherits neither deadline nor cancellation from a call that ended', () => {
    const signal = new AbortController().signal;
    const done = served({ deadline: Date.now() + 100, signal, ended: true } as Partial<Invocation>);
    const call = inherit(done, own, POLICY);
    expect(call.timeoutMs).toBe(3_000);
    expect(call.signal).toBeUndefined();
  });

  it('carries the tag, the baggage and the retry marker, nothing else, under the call’s own attachments', () => {
    const from = served({
      attachments: {
        'callisto-tag': 'gray',
        baggage: 'user=7',
        'baggage-tenant': 't1',
        'callisto-retry': '2',
        authorization: 'Bearer secret',
        'callisto-call-id': 'abcdefghij-1f',
        'x-other': 'no',
      },
    });
    const call = inherit(from, { ...own, attachments: { 'baggage-tenant': 'mine' } }, POLICY);
    expect(call.attachments).toMatchObject({
      'callisto-tag': 'gray',
      baggage: 'user=7',
      'baggage-tenant': 'mine',
      'callisto-retry': '2',
    });
    expect(call.underRetry).toBe(true);
    for (const key of ['authorization', 'callisto-call-id', 'x-other']) {
      expect(call.attachments[key], key).toBeUndefined();
    }
  });

  it(`inherits at most ${MAX_INHERITED_BAGGAGE_KEYS} baggage keys and ${MAX_INHERITED_BAGGAGE_BYTES} bytes`, () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 40; i++) many[`baggage-k${i}`] = 'v';
    const byKeys = inherit(served({ attachments: many }), own, POLICY).attachments;
    expect(Object.keys(byKeys).filter((key) => key.startsWith('baggage-'))).toHaveLength(
      MAX_INHERITED_BAGGAGE_KEYS,
    );
    const big: Record<string, string> = {};
    for (let i = 0; i < 4; i++) big[`baggage-b${i}`] = 'x'.repeat(1_500);
    const byBytes = inherit(served({ attachments: big }), own, POLICY).attachments;
    const kept = Object.entries(byBytes).filter(([key]) => key.startsWith('baggage-'));
    expect(kept).toHaveLength(2);
    const bytes = kept.reduce((sum, [key, value]) => sum + key.length + value.length, 0);
    expect(bytes).toBeLessThanOrEqual(MAX_INHERITED_BAGGAGE_BYTES);
  });

  it('continues the trace: the caller’s trace id with a new span, or the one derived from the call id', () => {
    const withParent = served({
      attachments: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, tracestate: 'k=v' },
    });
    const child = inherit(withParent, own, POLICY).attachments;
    const parsed = parseTraceparent(child.traceparent)!;
    expect(parsed).toMatchObject({ traceId: TRACE, flags: '01' });
    expect(parsed.spanId).not.toBe('00f067aa0ba902b7');
    expect(child.tracestate).toBe('k=v');
    const derived = parseTraceparent(inherit(served(), own, POLICY).attachments.traceparent)!;
    expect(derived.traceId).toBe(traceIdOfCallId('abcdefghij-1f'));
    expect(derived.flags).toBe('00');
  });

  it('switches each piece off on its own', () => {
    const from = served({
      deadline: Date.now() + 100,
      signal: new AbortController().signal,
      attachments: { 'callisto-tag': 'gray', 'baggage-a': '1', 'callisto-retry': '2' },
    });
    const off = (key: keyof HopPolicy): HopPolicy => ({ ...POLICY, [key]: false });
    expect(inherit(from, own, off('deadline')).timeoutMs).toBe(3_000);
    expect(inherit(from, own, off('cancellation')).signal).toBeUndefined();
    expect(inherit(from, own, off('tag')).attachments['callisto-tag']).toBeUndefined();
    expect(inherit(from, own, off('baggage')).attachments['baggage-a']).toBeUndefined();
    expect(inherit(from, own, off('trace')).attachments.traceparent).toBeUndefined();
    const noRetry = inherit(from, own, off('retry'));
    expect(noRetry.underRetry).toBe(false);
    expect(noRetry.attachments['callisto-retry']).toBeUndefined();
    expect(
      hopPolicyOf({
        ...DEFAULT_CONSUMER_CONFIG,
        inheritDeadline: false,
        inheritCancellation: false,
        inheritTag: false,
        inheritBaggage: false,
        inheritTrace: false,
        inheritRetry: false,
      }),
    ).toBeUndefined();
  });
});

describe('trace ids without an SDK', () => {
  it('derives a valid, stable, distinct W3C trace id from each call id', () => {
    const ids = Array.from({ length: 1_000 }, () => newCallId());
    const traces = ids.map(traceIdOfCallId);
    for (const trace of traces) {
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      expect(trace).not.toBe('0'.repeat(32));
    }
    expect(new Set(traces).size).toBe(ids.length);
    expect(traceIdOfCallId(ids[0]!)).toBe(traces[0]);
    // another client's id (any 1–64 safe characters): hashed, still valid
    expect(traceIdOfCallId('req-42')).toMatch(/^[0-9a-f]{32}$/);
  });
});

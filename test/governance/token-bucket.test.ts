/** Token buckets and keyed buckets (src/governance/token-bucket.ts) and whose bucket a call takes from. */
import { describe, expect, it } from 'vitest';
import type { Invocation } from '../../src/core/invocation.js';
import {
  APPLICATION_ATTACHMENT,
  callerApplication,
  remoteHost,
} from '../../src/governance/provider-limiters.js';
import { createKeyedBuckets, createTokenBucket } from '../../src/governance/token-bucket.js';

describe('token bucket', () => {
  it('gives the burst at once, then perSecond, with the wait until the next token', () => {
    const bucket = createTokenBucket({ perSecond: 10, burst: 3 });
    expect([bucket.take(1000), bucket.take(1000), bucket.take(1000)]).toEqual([0, 0, 0]);
    expect(bucket.take(1000)).toBe(100);
    expect(bucket.take(1050)).toBe(50);
    expect(bucket.take(1100)).toBe(0);
    // a long quiet period saves up no more than the burst
    expect([0, 0, 0, 1].map(() => bucket.take(60_000))).toEqual([0, 0, 0, 100]);
  });

  it('defaults the burst to perSecond rounded up, at least 1', () => {
    const slow = createTokenBucket({ perSecond: 0.5 });
    expect([slow.take(0), slow.take(0)]).toEqual([0, 2000]);
    const fast = createTokenBucket({ perSecond: 2.5 });
    expect([0, 0, 0, 0].map(() => fast.take(0))).toEqual([0, 0, 0, 400]);
  });

  it('keeps at most maxKeys buckets, dropping the oldest key', () => {
    const buckets = createKeyedBuckets({ perSecond: 0.001, burst: 1 }, 3);
    for (let i = 0; i < 100; i++) buckets.take(`key-${i}`, 0);
    expect(buckets.size).toBe(3);
    expect(buckets.take('key-99', 0)).toBeGreaterThan(0);
  });
});

describe('whose bucket', () => {
  const invocation = (extra: Partial<Invocation> & { identity?: { id: string; via: string } }) =>
    ({ attachments: {}, ...extra }) as Invocation;

  it('the authenticated identity wins over the application the consumer names', () => {
    expect(callerApplication(invocation({ attachments: { [APPLICATION_ATTACHMENT]: 'shop' } }))).toBe('shop');
    expect(
      callerApplication(
        invocation({
          attachments: { [APPLICATION_ATTACHMENT]: 'shop' },
          identity: { id: 'billing', via: 'jwt' },
        }),
      ),
    ).toBe('billing');
    expect(callerApplication(invocation({}))).toBe('');
  });

  it('per address is per host', () => {
    expect(remoteHost(invocation({ remoteAddress: '10.0.0.5:41234' }))).toBe('10.0.0.5');
    expect(remoteHost(invocation({ remoteAddress: '[::1]:41234' }))).toBe('[::1]');
    expect(remoteHost(invocation({ remoteAddress: 'injvm' }))).toBe('injvm');
  });
});

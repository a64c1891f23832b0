/**
 * What a shed refusal means to the consumer: a provider's `Timeout` that says it was shed before running
 * (deadline-aware admission, expired in its queue) proves the call never ran, so any method may fail
 * over; a deadline refusal (the caller's budget was short) does not count against the provider's health.
 */
import { describe, expect, it } from 'vitest';
import { isRetryable, provesNotExecuted } from '../../src/cluster/retryable.js';
import { RpcError } from '../../src/core/rpc-error.js';
import { isHealthy } from '../../src/filters/health.js';

const remote = (code: 'Timeout' | 'Overloaded', details: Record<string, unknown>): RpcError =>
  new RpcError(code, 'refused', { remote: true, details });

describe('shed refusals on the consumer', () => {
  it('prove the call never ran when the provider shed it by deadline or expiry', () => {
    for (const shed of ['deadline', 'expired']) {
      const error = remote('Timeout', { shed });
      expect(provesNotExecuted(error)).toBe(true);
      expect(isRetryable(error, false)).toBe(true);
    }
    const plain = remote('Timeout', {});
    expect(provesNotExecuted(plain)).toBe(false);
    expect(isRetryable(plain, false)).toBe(false);
    // the same details from this side (not the provider's answer) prove nothing
    expect(provesNotExecuted(new RpcError('Timeout', 'local', { details: { shed: 'deadline' } }))).toBe(
      false,
    );
  });

  it('do not count a deadline refusal against the provider, but do count an expired call', () => {
    expect(isHealthy(remote('Timeout', { shed: 'deadline' }))).toBe(true);
    expect(isHealthy(remote('Timeout', { shed: 'expired' }))).toBe(false);
    expect(isHealthy(remote('Timeout', {}))).toBe(false);
  });
});

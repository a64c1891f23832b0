/** The provider record's `admin` field (where the admin endpoints are) as record validation reads it. */
import { describe, expect, it } from 'vitest';
import { validateProviderRecord } from '../../src/registry/index.js';

const base = { service: 'a.B', version: '1.0.0', group: '', host: '10.0.0.5', port: 20880 };

describe('the admin field of a provider record', () => {
  it('is kept when it is { host, port }', () => {
    const check = validateProviderRecord({ ...base, admin: { host: '10.0.0.5', port: 9464, extra: 1 } }, 1);
    expect(check.record?.admin).toEqual({ host: '10.0.0.5', port: 9464 });
    expect(validateProviderRecord(base, 1).record).not.toHaveProperty('admin');
  });

  it('rejects the record when it has the wrong type', () => {
    for (const admin of [
      'localhost:9464',
      { host: 'h' },
      { host: 'h', port: '9464' },
      { host: 'h', port: 0 },
      { host: 'a b', port: 9464 },
      null,
    ]) {
      expect(validateProviderRecord({ ...base, admin }, 1).problem).toMatch(
        /^admin .* is not \{ host, port \}/,
      );
    }
  });
});

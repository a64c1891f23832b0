/** The `tls` field of provider records (contracts: additive, optional; wrong types rejected). */
import { describe, expect, it } from 'vitest';
import { validateProviderRecord } from '../../src/registry/record-validation.js';

const base = { service: 's', version: '1', group: '', host: '127.0.0.1', port: 2000 };

describe('provider record: tls', () => {
  it('tls: true with no transport (or tcp) is read as transport tls, never as plaintext', () => {
    expect(validateProviderRecord({ ...base, tls: true }, 1).record).toMatchObject({
      tls: true,
      transport: 'tls',
    });
    expect(validateProviderRecord({ ...base, tls: true, transport: 'tcp' }, 1).record).toMatchObject({
      tls: true,
      transport: 'tls',
    });
  });

  it('transport tls implies tls: true; no tls field and tcp stay plaintext', () => {
    expect(validateProviderRecord({ ...base, transport: 'tls' }, 1).record).toMatchObject({ tls: true });
    const plain = validateProviderRecord({ ...base, tls: false }, 1).record!;
    expect(plain.transport).toBeUndefined();
    expect(plain.tls).toBeUndefined();
  });

  it('rejects a tls field that is not a boolean', () => {
    expect(validateProviderRecord({ ...base, tls: 'yes' }, 1).problem).toMatch(
      /tls "yes" is not true or false/,
    );
    expect(validateProviderRecord({ ...base, tls: 1 }, 1).problem).toMatch(/tls 1/);
  });
});

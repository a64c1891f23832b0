/** The provider record's `http` field: accepted as `{ port }`, refused with a wrong type. */
import { describe, expect, it } from 'vitest';
import { validateProviderRecord } from '../../src/registry/index.js';

const base = { service: 'example.UserService', version: '1.0.0', host: '127.0.0.1', port: 20880 };

describe('provider record http', () => {
  it('keeps { port } and nothing else of it', () => {
    const { record } = validateProviderRecord({ ...base, http: { port: 8080, extra: 'x' } }, 1);
    expect(record?.http).toEqual({ port: 8080 });
    expect(validateProviderRecord(base, 1).record).not.toHaveProperty('http');
  });

  it.each([
    ['a number', 8080],
    ['a string port', { port: '8080' }],
    ['port 0', { port: 0 }],
    ['a port past 65535', { port: 70000 }],
    ['a fraction', { port: 80.5 }],
    ['null', null],
    ['an array', [8080]],
  ])('refuses %s', (_, http) => {
    expect(validateProviderRecord({ ...base, http }, 1).problem).toMatch(/^http /);
  });
});

import { expect, it } from 'vitest';
import { createMockCatalog, hasMock } from './mock-methods.js';

const KEY = { name: 'test.Mocked', version: '1.0.0', group: '' };

it('collects the methods with a mock per service: mockImpl functions (a class instance too) and declared mocks', () => {
  class UserMock {
    getUser() {
      return 'mock';
    }
  }
  const catalog = createMockCatalog();
  expect(catalog.of(KEY)).toEqual([]);
  catalog.add(KEY, { getUser: {}, rename: {} }, undefined);
  expect(catalog.of(KEY)).toEqual([]);
  catalog.add(KEY, undefined, new UserMock());
  catalog.add(KEY, { list: { mock: () => [] }, rename: {} }, { count: 3 });
  expect(catalog.of(KEY)).toEqual(['getUser', 'list']);
  expect(catalog.of({ ...KEY, version: '2.0.0' })).toEqual([]);
  expect(hasMock(new UserMock(), 'getUser', {})).toBe(true);
  expect(hasMock({ getUser: 'not a function' }, 'getUser', {})).toBe(false);
});

/** The ConfigError a synchronous attempt throws: fails the test when it throws nothing or something else. */
import { expect } from 'vitest';
import { ConfigError } from '../../src/index.js';

export function configErrorOf(attempt: () => unknown): ConfigError {
  try {
    attempt();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

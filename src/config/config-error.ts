/** An invalid configuration value, naming the key, the value and what was allowed. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    readonly key: string,
    readonly value: unknown,
    readonly expected: string,
  ) {
    super(`invalid configuration: ${key} = ${describe(value)}; expected ${expected}`);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

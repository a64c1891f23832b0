/**
 * A configuration mistake: names the key, the value, what is allowed, where the value was set and, for
 * a likely typo, what it probably meant.
 *
 *   invalid configuration: consumer.loadbalance = "roundrobbin" (from environment variable
 *   CALLISTO_CONSUMER_LOADBALANCE); expected one of random, roundrobin, …; did you mean "roundrobin"?
 */

export interface ConfigErrorOptions {
  /**
   * Where the value was set: `file /srv/app/callisto.config.yaml`, `environment variable CALLISTO_X`,
   * `code, callisto() options`, `code, refer(example.UserService) options`.
   */
  source?: string;
  /** The key or name the value most likely meant (a did-you-mean). */
  suggestion?: string;
  /** The key itself is unknown (a misspelt key or variable), rather than its value invalid. */
  unknownKey?: boolean;
  /** What exactly is wrong, when "expected …" alone does not say (`"h:2379/" ends with a slash`). */
  problem?: string;
  cause?: unknown;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** Where the value was set, when known. */
  readonly source: string | undefined;
  /** What the key or value most likely meant, when a close match exists. */
  readonly suggestion: string | undefined;
  /** True when the key itself is unknown. */
  readonly unknownKey: boolean;

  constructor(
    readonly key: string,
    readonly value: unknown,
    readonly expected: string,
    options: ConfigErrorOptions = {},
  ) {
    super(formatMessage(key, value, expected, options), options.cause ? { cause: options.cause } : undefined);
    this.source = options.source;
    this.suggestion = options.suggestion;
    this.unknownKey = options.unknownKey ?? false;
  }

  /** An unknown key (or `CALLISTO_*` variable), with the closest known one when there is one. */
  static unknownKey(
    key: string,
    value: unknown,
    options: Omit<ConfigErrorOptions, 'unknownKey'> & { expected?: string } = {},
  ): ConfigError {
    return new ConfigError(key, value, options.expected ?? 'a key listed in docs/configuration.md', {
      ...options,
      unknownKey: true,
    });
  }
}

function formatMessage(key: string, value: unknown, expected: string, options: ConfigErrorOptions): string {
  const { source, suggestion, unknownKey, problem } = options;
  const what = unknownKey ? `unknown ${key.startsWith('CALLISTO_') ? 'variable' : 'key'} ${key}` : key;
  // An unknown variable names itself; "from environment variable X" would say it twice.
  const from =
    source === undefined
      ? ''
      : source === `environment variable ${key}`
        ? ' (from the environment)'
        : ` (from ${source})`;
  const valueText = value === undefined ? '' : ` = ${describeValue(value)}`;
  const hint = suggestion === undefined ? '' : `; did you mean ${quoteSuggestion(suggestion, unknownKey)}?`;
  const because = problem === undefined ? '' : `: ${problem}`;
  return `invalid configuration: ${what}${valueText}${from}${because}; expected ${expected}${hint}`;
}

/** Keys read as themselves (`consumer.timeoutMs`); names and values as quoted strings (`"roundrobin"`). */
const quoteSuggestion = (suggestion: string, unknownKey: boolean | undefined): string =>
  unknownKey ? suggestion : JSON.stringify(suggestion);

/** A short, single-line rendering of a configured value. */
export function describeValue(value: unknown): string {
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  if (typeof value === 'bigint') return `${value}n`;
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}

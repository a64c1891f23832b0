/**
 * Polls a condition until it holds or a deadline passes: the way tests synchronise with asynchronous
 * effects, instead of sleeping.
 */

export interface WaitForOptions {
  /** Poll interval in ms. Default 10. */
  intervalMs?: number;
  /** Text for the timeout error. */
  message?: string;
}

/**
 * Resolves with the first truthy value `fn` returns (it may be async); throws after `timeoutMs` with the
 * last error `fn` threw or the message. A `fn` that throws is retried like one that returns false.
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  timeoutMs = 5_000,
  options: WaitForOptions = {},
): Promise<NonNullable<T>> {
  const interval = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = options.message ?? 'condition not met';
      const detail = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`waitFor timed out after ${timeoutMs} ms (${reason})${detail}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

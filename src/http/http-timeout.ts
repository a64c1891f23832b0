/**
 * The caller's deadline as an HTTP request states it (`x-callisto-timeout-ms`), read by the provider's
 * HTTP entry and the gateway alike. A deadline is kept by a timer, and Node's timers take at most
 * 2^31 - 1 ms (about 24.8 days): a longer delay overflows and fires after 1 ms. So a longer timeout is
 * clamped to {@link MAX_TIMEOUT_MS} (which no call reaches) instead of answering 504 at once.
 */

/** The longest timeout a request may state, ms: the longest delay of a Node timer. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The timeout `text` states, ms (0: none), clamped to MAX_TIMEOUT_MS; undefined when not a number of ms. */
export function parseTimeoutMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^\d{1,16}$/.test(trimmed)) return undefined;
  return Math.min(Number(trimmed), MAX_TIMEOUT_MS);
}

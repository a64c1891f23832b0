/**
 * "Did you mean …?" for configuration keys, variables and extension names: the closest candidate by
 * edit distance (case-insensitive), if it is close enough to be a likely typo.
 */
import { distance } from 'fastest-levenshtein';
import { ConfigError } from './config-error.js';

/** Edits allowed for a match: a third of the longer word, at least one. */
const allowedEdits = (a: string, b: string): number =>
  Math.max(1, Math.floor(Math.max(a.length, b.length) / 3));

/** The candidate `input` most likely misspells, or undefined when none is close. */
export function closestMatch(input: string, names: Iterable<string>): string | undefined {
  const candidates = [...names];
  const wanted = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const edits = distance(wanted, candidate.toLowerCase());
    if (edits <= allowedEdits(wanted, candidate) && edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  if (best !== undefined || wanted.length < 3) return best;
  // A name cut short: 'expo' -> 'exponential', when only one candidate starts that way.
  const started = candidates.filter((candidate) => candidate.toLowerCase().startsWith(wanted));
  return started.length === 1 ? started[0] : undefined;
}

/**
 * The known dotted key `input` most likely means: a close spelling of the whole path
 * (`consumer.timeout` -> `consumer.timeoutMs`), else a known key whose last segment it names in the wrong
 * place (`timeoutMs` -> `consumer.timeoutMs`).
 */
export function closestKey(input: string, knownKeys: readonly string[]): string | undefined {
  const close = closestMatch(input, knownKeys);
  if (close !== undefined) return close;
  const last = input.slice(input.lastIndexOf('.') + 1).toLowerCase();
  const sameName = knownKeys.filter((key) => key.slice(key.lastIndexOf('.') + 1).toLowerCase() === last);
  return sameName.length === 1 ? sameName[0] : undefined;
}

/**
 * Throws `ConfigError.unknownKey` for the first key of `options` (with a value) that `known` does not
 * list, naming it as `prefix + key`, the closest known key and every option there is: what `refer()`
 * and `provide()` do with their option objects. `explain` may throw a more fitting error for a key
 * first (a key that belongs elsewhere).
 */
export function refuseUnknownKeys(
  options: Record<string, unknown>,
  known: readonly string[],
  where: { readonly prefix: string; readonly source: string; readonly explain?: (key: string) => void },
): void {
  const { prefix, source } = where;
  for (const key of Object.keys(options)) {
    if (options[key] === undefined || known.includes(key)) continue;
    where.explain?.(key);
    const suggestion = closestKey(key, known);
    throw ConfigError.unknownKey(prefix + key, options[key], {
      source,
      suggestion: suggestion === undefined ? undefined : prefix + suggestion,
      expected: `one of the options ${known.join(', ')}`,
    });
  }
}

/**
 * The service names closest to one a user typed (a typo, another case, the name without its package):
 * what `callisto ls` and the dashboard suggest when a service is not found.
 */
import { distance } from 'fastest-levenshtein';

/** The names closest to `name` (a typo, another case, the name without its package), for messages. */
export function similarNames(name: string, names: Iterable<string>): string[] {
  const lower = name.toLowerCase();
  const found = new Set<string>();
  for (const candidate of names) {
    const other = candidate.toLowerCase();
    const tail = other.slice(other.lastIndexOf('.') + 1);
    if (
      other === lower ||
      tail === lower ||
      other.endsWith(`.${lower}`) ||
      distance(lower, other) <= Math.max(2, Math.floor(name.length / 5))
    ) {
      found.add(candidate);
    }
  }
  return [...found].sort();
}

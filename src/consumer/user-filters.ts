/** The filters a user gives the consumer (the app's, a reference's, a method's), split by position. */
import { ConfigError } from '../core/config-error.js';
import { type FilterEntry, type NamedFilter, namedFilter } from '../core/filter.js';

/** User filters by position: plain functions are per call. */
export interface UserFilters {
  readonly call: readonly NamedFilter[];
  readonly attempt: readonly NamedFilter[];
}

export const NO_USER_FILTERS: UserFilters = { call: [], attempt: [] };

/** Splits consumer filter entries by position; `where` names them in errors (`filters.consumer`). */
export function userFilters(entries: readonly FilterEntry[], where: string): UserFilters {
  const call: NamedFilter[] = [];
  const attempt: NamedFilter[] = [];
  entries.forEach((entry, i) => {
    const position = typeof entry === 'function' ? 'call' : entry?.position;
    if (position === 'attempt') attempt.push(namedFilter(entry, 'attempt', `${where}[${i}]`));
    else if (position === 'call') call.push(namedFilter(entry, 'call', `${where}[${i}]`));
    else {
      throw new ConfigError(
        `${where}[${i}]`,
        (entry as NamedFilter | undefined)?.name ?? entry,
        'a consumer filter: a function, or defineFilter({ position: "call" | "attempt" })',
        {
          problem: `a ${String(position)} filter cannot run on the consumer`,
        },
      );
    }
  });
  return { call, attempt };
}

/** The app's, then the reference's, then the method's filters (the order they run in at equal orders). */
export function joinUserFilters(...layers: readonly UserFilters[]): UserFilters {
  return { call: layers.flatMap((layer) => layer.call), attempt: layers.flatMap((layer) => layer.attempt) };
}

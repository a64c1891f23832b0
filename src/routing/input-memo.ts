/**
 * What a router computes from its input list alone (the providers a condition keeps, the ones with a
 * tag), kept while the same input array comes again: the directory hands routing the same array until
 * the list or the providers' health changes, so a steady call costs a comparison, not a filter.
 */
const MAX_KEYS = 64;

export interface InputMemo<P, R> {
  /** `compute(input, key)` once per input array and key (a function made once, not per call). */
  get(input: readonly P[], key: string, compute: (input: readonly P[], key: string) => R): R;
}

export function createInputMemo<P, R>(): InputMemo<P, R> {
  let input: readonly P[] | undefined;
  let results = new Map<string, R>();
  return {
    get(list, key, compute) {
      if (list !== input) {
        input = list;
        if (results.size > 0) results = new Map();
      }
      let result = results.get(key);
      if (result === undefined) {
        if (results.size >= MAX_KEYS) results.clear();
        result = compute(list, key);
        results.set(key, result);
      }
      return result;
    },
  };
}

/** `list` filtered by `keep`, the same array when every provider is kept. */
export function keepWhere<P>(list: readonly P[], keep: (item: P) => boolean): readonly P[] {
  for (let i = 0; i < list.length; i++) {
    if (!keep(list[i]!)) return list.filter(keep);
  }
  return list;
}

/** Parses Prometheus exposition text (parse-prometheus-text-format) into families and samples. */
// @ts-expect-error: the package ships no types
import parse from 'parse-prometheus-text-format';

export interface Sample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

/**
 * The families of `text`. A histogram's series are returned as their `_bucket`, `_sum` and `_count`
 * families (with type `HISTOGRAM_PART`): the parser folds a histogram's samples into one and drops their
 * labels, which loses every series but one of a labelled histogram; its declared type is checked here.
 */
export function parsePrometheus(text: string): Map<string, Family> {
  const histograms = [...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1]!);
  let plain = text;
  for (const name of histograms) {
    plain = plain.replace(new RegExp(`^# (HELP|TYPE) ${name} .*\n`, 'gm'), '');
  }
  const families = (parse as (text: string) => Family[])(plain);
  // without its TYPE line, a histogram's parts come as one family per run of lines: merge them
  const out = new Map<string, Family>();
  for (const family of families) {
    const seen = out.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else out.set(family.name, family);
  }
  for (const name of histograms) {
    for (const part of ['_bucket', '_sum', '_count']) {
      const family = out.get(`${name}${part}`);
      if (family) family.type = 'HISTOGRAM_PART';
    }
    out.set(name, { name, help: '', type: 'HISTOGRAM', metrics: [] });
  }
  return out;
}

/** The value of the sample of `name` whose labels include `labels` (undefined when none matches). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  const family = families.get(name);
  const sample = family?.metrics.find((m) =>
    Object.entries(labels).every(([key, value]) => m.labels?.[key] === value),
  );
  if (sample === undefined) return undefined;
  return Number(sample.value ?? sample.count);
}

/** `callisto config explain`: the effective configuration and where each value comes from. */
import { Command } from 'commander';
import { ConfigError, callisto, DEFAULT_CONFIG } from '../../index.js';
import { loadConfigWithSources, redactConfig } from '../../internal.js';
import { configMistake } from '../cli-app.js';
import { addCommonOptions, type CommonOptions } from '../options.js';
import { type CliIo, createOutput } from '../output.js';
import { formatTable } from '../table.js';

interface ExplainOptions extends CommonOptions {
  changed?: boolean;
}

const EXAMPLES = `
Examples:
  $ callisto config explain
  $ callisto config explain --config deploy/callisto.config.yaml --changed
  $ CALLISTO_CONSUMER_TIMEOUT_MS=500 callisto config explain --json

Sources, later ones winning: defaults < the file (callisto.config.yaml|yml|json or callisto.properties
in the working directory, CALLISTO_CONFIG, or --config) < CALLISTO_* variables. Values an application
passes to callisto() in code win over all of these; the command line cannot see them.`;

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys whose value is one object, shown whole (as the loader sets them): `tags`, `limits`, `tokens`. */
const WHOLE_OBJECT_KEYS = new Set(['tags', 'limits', 'tokens']);

/** Every key of the configuration with its value: nested sections flattened, lists, `tags`, `limits` and `tokens` whole. */
function leaves(value: Plain, prefix = ''): Array<[string, unknown]> {
  return Object.entries(value).flatMap(
    ([key, child]): Array<[string, unknown]> =>
      isPlain(child) && !WHOLE_OBJECT_KEYS.has(key)
        ? leaves(child, `${prefix}${key}.`)
        : [[prefix + key, child]],
  );
}

/** `default`, `file`, `environment` or `code`, from a source as loadConfigWithSources names it. */
function sourceKind(source: string | undefined): string {
  if (source === undefined) return 'default';
  if (source.startsWith('file ')) return 'file';
  if (source.startsWith('environment variable ')) return 'environment';
  return 'code';
}

export function configCommand(io: CliIo): Command {
  const explain = new Command('explain')
    .description('print the effective configuration with the source of each value')
    .option('--changed', 'only the values that are not defaults');
  addCommonOptions(explain)
    .addHelpText('after', EXAMPLES)
    .action((options: ExplainOptions) => runExplain(io, options));
  return new Command('config')
    .description('inspect the configuration')
    .addCommand(explain)
    .addHelpText(
      'after',
      `
Examples:
  $ callisto config explain
  $ callisto config explain --changed --config deploy/callisto.config.yaml`,
    );
}

async function runExplain(io: CliIo, options: ExplainOptions): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  const load = { env: io.env, ...(options.config === undefined ? {} : { configFile: options.config }) };
  let loaded: ReturnType<typeof loadConfigWithSources>;
  try {
    loaded = loadConfigWithSources({}, load);
    // what only an app checks: extension names and registry kinds against its (loaded) extensions
    const silent = () => {};
    await (
      await callisto({ load, logger: { debug: silent, info: silent, warn: silent, error: silent } })
    ).close();
  } catch (error) {
    if (error instanceof ConfigError) throw configMistake(error);
    throw error;
  }
  // what loading ignored (service links, other tools' CALLISTO_* variables), as the app would log it
  for (const notice of loaded.notices) output.note(`[callisto] ${notice.level}: ${notice.message}`);
  const defaults = new Map(leaves(DEFAULT_CONFIG as unknown as Plain));
  // secrets (tokens, the JWT secret, credentials, PEM keys) are shown as (hidden)
  const values = leaves(redactConfig(loaded.config) as unknown as Plain)
    .map(([key, value]) => {
      const source = loaded.sourceOf(key);
      return {
        key,
        value,
        source: source ?? 'default',
        kind: sourceKind(source),
        default: defaults.get(key),
      };
    })
    .filter((entry) => !options.changed || entry.kind !== 'default');
  if (output.json) {
    output.document({ values });
    return;
  }
  const sources = [...new Set(values.filter((v) => v.kind !== 'default').map((v) => v.source))];
  output.line(sources.length === 0 ? 'every value is a default' : `set by: ${sources.join('; ')}`);
  if (values.length === 0) return;
  const header = ['KEY', 'VALUE', 'SOURCE'].map((h) => output.style('bold', h));
  const rows = values.map((entry) => [
    entry.key,
    JSON.stringify(entry.value),
    entry.kind === 'default' ? output.style('dim', 'default') : output.style('cyan', entry.source),
  ]);
  for (const line of formatTable(header, rows)) output.line(line);
}

/**
 * `callisto route ls|set|rm|explain`: a service's routing rules (docs/routing.md), kept in its override
 * record and changed with compare-and-set like every runtime control change; `explain` says what the
 * rules do with one call against the providers registered now.
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  createRegistryControl,
  type Registry,
  type RegistryControl,
  type RouteExplanation,
  type RouteRule,
  RouteSyntaxError,
} from '../../registry/index.js';
import { CliError, ExitCode, unreachableError, usageError } from '../../tools/exit-codes.js';
import { openCliApp } from '../cli-app.js';
import { addControlOptions, type ControlOptions } from '../control-run.js';
import { collect } from '../options.js';
import { type CliIo, createOutput, type Output } from '../output.js';
import { openRegistry, registryAddressOf } from '../registry-connection.js';
import { keyLabel, listServices } from '../registry-view.js';
import { formatTable } from '../table.js';

const EXAMPLES = `
Examples:
  $ callisto route ls example.UserService --registry etcd://127.0.0.1:2379
  $ callisto route set example.UserService web-v2 --condition 'method = getUser & application = web => tag = v2'
  $ callisto route set example.UserService tags --tag --force
  $ callisto route set example.UserService canary --split '90:version = 1.*' --split '10:version = 2.*' --sticky-by 'attachments[user-id]'
  $ callisto route set example.UserService local --zone --threshold 0.7 --panic 0.5
  $ callisto route set example.UserService raw --json '{"kind":"condition","rule":"host = 10.0.0.9 =>"}'
  $ callisto route explain example.UserService --method getUser --tag v2 --application web --zone eu-1
  $ callisto route rm example.UserService canary

Rules apply in this order, whatever order they are listed in: condition rules (as listed), tag routing,
weighted splits (as listed), zone routing; then the balancer picks among what is left. Consumers apply
a change within about a second, without a restart; each change is one compare-and-set of the service's
override record, so two operators changing rules at once both get their change. A rule with a mistake
is refused (exit 2), with the character it is at.`;

interface SetOptions extends ControlOptions {
  condition?: string;
  tag?: boolean;
  split?: string[];
  when?: string;
  stickyBy?: string;
  zone?: boolean;
  threshold?: number;
  panic?: number;
  force?: boolean;
  rule?: string;
}

interface ExplainOptions extends ControlOptions {
  method?: string;
  tag?: string;
  application?: string;
  zone?: string;
  host?: string;
  attachment?: string[];
}

function share(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new InvalidArgumentError('expected a share from 0 to 1, e.g. 0.7');
  }
  return value;
}

/** One line per rule, as `ls` shows it. */
export function describeRoute(rule: RouteRule): string {
  const forced = 'force' in rule && rule.force === true ? ' (forced)' : '';
  switch (rule.kind) {
    case 'condition':
      return `${rule.rule}${forced}`;
    case 'tag':
      return rule.force
        ? 'tag routing, no fallback (forced)'
        : 'tag routing, falling back to untagged providers';
    case 'weight':
      return `${rule.when ? `when ${rule.when}: ` : ''}split ${rule.split.map((s) => `${s.weight}: ${s.to}`).join(' | ')}${
        rule.stickyBy ? `, sticky by ${rule.stickyBy}` : ''
      }${forced}`;
    case 'zone':
      return `local zone first, threshold ${rule.threshold ?? 0.7}, panic below ${rule.panicThreshold ?? 0.5}`;
  }
}

/** The rule `route set` writes, from its options. */
function ruleOf(name: string, options: SetOptions): Record<string, unknown> {
  const kinds = [
    options.condition !== undefined,
    options.tag === true,
    options.split !== undefined,
    options.zone === true,
    options.rule !== undefined,
  ].filter(Boolean).length;
  if (kinds !== 1) {
    throw usageError(
      'give exactly one of --condition <rule>, --tag, --split <weight:condition>…, --zone, --rule <json>',
    );
  }
  const force = options.force === undefined ? {} : { force: true };
  if (options.rule !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options.rule);
    } catch (error) {
      throw usageError(`--rule is not JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw usageError('--rule is a JSON object: {"kind": …}');
    }
    return { name, ...parsed };
  }
  if (options.condition !== undefined) return { name, kind: 'condition', rule: options.condition, ...force };
  if (options.tag) return { name, kind: 'tag', ...force };
  if (options.zone) {
    if (options.force) throw usageError('--force does not apply to a zone rule (see --panic)');
    return {
      name,
      kind: 'zone',
      ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
      ...(options.panic !== undefined ? { panicThreshold: options.panic } : {}),
    };
  }
  const split = options.split!.map((side) => {
    const colon = side.indexOf(':');
    const weight = Number(side.slice(0, colon));
    if (colon <= 0 || !Number.isInteger(weight)) {
      throw usageError(`--split takes <weight>:<provider condition>, e.g. '10:tag = v2', not "${side}"`);
    }
    return { weight, to: side.slice(colon + 1).trim() };
  });
  return {
    name,
    kind: 'weight',
    split,
    ...(options.when !== undefined ? { when: options.when } : {}),
    ...(options.stickyBy !== undefined ? { stickyBy: options.stickyBy } : {}),
    ...force,
  };
}

/** Opens the registry and its control, runs `work`, closes both; maps failures to exit codes. */
async function withControl(
  io: CliIo,
  options: ControlOptions,
  doing: string,
  work: (control: RegistryControl, output: Output, location: string, registry: Registry) => Promise<void>,
): Promise<void> {
  const output = createOutput(io, { json: options.json ?? false });
  const app = await openCliApp(options, output);
  try {
    const opened = await openRegistry(app, registryAddressOf(app), options.timeout, (m) => output.warn(m));
    const control = createRegistryControl(opened.address, { open: async () => opened.registry });
    try {
      await work(control, output, opened.location, opened.registry);
    } catch (error) {
      if (error instanceof CliError) throw error;
      if (error instanceof RouteSyntaxError) {
        // the text with a caret under the character, then the one-line error
        output.note(`  ${error.source}\n  ${' '.repeat(error.position)}^`);
        throw usageError(`${error.problem} at character ${error.position + 1}`);
      }
      if (error instanceof TypeError) throw usageError(error.message);
      if (/timed out/.test((error as Error).message)) {
        throw unreachableError(`cannot ${doing} at ${opened.location}: ${(error as Error).message}`);
      }
      throw new CliError(ExitCode.Failed, `cannot ${doing}: ${(error as Error).message}`);
    } finally {
      await control.close();
    }
  } finally {
    await app.close();
  }
}

function printRules(
  output: Output,
  rows: Array<{ key: { name: string; version: string; group: string }; rules: RouteRule[] }>,
) {
  const lines = rows.flatMap(({ key, rules }) =>
    rules.map((rule) => [keyLabel(key), rule.name, rule.kind, describeRoute(rule)]),
  );
  for (const line of formatTable(
    ['SERVICE', 'RULE', 'KIND', 'DEFINITION'].map((h) => output.style('bold', h)),
    lines,
  ))
    output.line(line);
}

/** `route explain` as text: the providers, each rule's verdict, and who was dropped where. */
export function explanationLines(explained: RouteExplanation): string[] {
  const lines = [
    `call ${explained.service}.${explained.method}${explained.tag ? ` tag ${explained.tag}` : ''}${
      explained.caller.application ? ` from ${explained.caller.application}` : ''
    }${explained.caller.zone ? ` in zone ${explained.caller.zone}` : ''}`,
    `providers: ${
      explained.providers
        .map(
          (p) =>
            `${p.address}${
              Object.keys(p.labels).length > 0
                ? ` [${Object.entries(p.labels)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(' ')}]`
                : ''
            }`,
        )
        .join(', ') || 'none'
    }`,
  ];
  if (explained.steps.length === 0) lines.push('rules: none (routing is skipped)');
  explained.steps.forEach((step, i) => {
    lines.push(
      `${i + 1}. ${step.kind} ${step.rule}: ${step.applied ? 'applied' : 'not applied'}: ${step.why}`,
    );
    for (const dropped of step.dropped) lines.push(`   dropped ${dropped.address}: ${dropped.why}`);
    lines.push(`   kept ${step.kept.join(', ') || 'none'}`);
  });
  lines.push(`outcome: ${explained.outcome}`);
  return lines;
}

export function routeCommand(io: CliIo): Command {
  const command = new Command('route').description(
    'list, set, remove and explain routing rules (tag, condition, weight, zone)',
  );
  command.addHelpText('after', EXAMPLES);

  const ls = new Command('ls')
    .description('list routing rules, per service key')
    .argument('[service]', 'only this service, e.g. example.UserService');
  addControlOptions(ls);
  const version = ls.options.find((option) => option.long === '--version');
  if (version !== undefined) version.defaultValue = undefined;
  ls.action((service: string | undefined, options: ControlOptions) =>
    withControl(io, options, 'list the routing rules', async (control, output, location, registry) => {
      const keys =
        service !== undefined
          ? [{ name: service, version: options.version ?? '1.0.0', group: options.group ?? '' }]
          : (await listServices(registry, location)).map(({ name, version, group }) => ({
              name,
              version,
              group,
            }));
      const rows = [];
      for (const key of keys) {
        const rules = await control.routes(key.name, { version: key.version, group: key.group });
        if (rules.length > 0) rows.push({ key, rules });
      }
      if (output.json) {
        output.document({
          registry: location,
          services: rows.map(({ key, rules }) => ({ ...key, routes: rules })),
        });
        return;
      }
      if (rows.length === 0) {
        output.line(`${location}: no routing rules${service === undefined ? '' : ` for ${service}`}`);
        return;
      }
      output.line(location);
      printRules(output, rows);
    }),
  );

  const set = new Command('set')
    .description('add a routing rule, or replace the rule of that name')
    .argument('<service>', 'a service name, e.g. example.UserService')
    .argument('<name>', 'the rule name (letters, digits, ".", "_", "-")')
    .option('--condition <rule>', "a condition rule: 'call conditions => provider conditions'")
    .option('--tag', 'tag routing (on by itself while providers carry tags; with --force: no fallback)')
    .option('--split <weight:condition>', "a side of a weighted split, e.g. '10:tag = v2' (repeat)", collect)
    .option('--when <condition>', 'split only the calls matching this call condition')
    .option('--sticky-by <key>', 'split by the hash of this call key (attachments[user-id], arguments[0])')
    .option('--zone', "zone routing: the caller's zone first")
    .option(
      '--threshold <share>',
      'zone: healthy share of the local zone that keeps every call local (default 0.7)',
      share,
    )
    .option(
      '--panic <share>',
      'zone: healthy share of all providers below which zones are ignored (default 0.5; 0 off)',
      share,
    )
    .option('--force', 'no fallback when the rule leaves a call no provider (NoProvider instead)')
    .option('--rule <json>', 'the rule as JSON, without its name ({"kind": …})');
  addControlOptions(set).action((service: string, name: string, options: SetOptions) =>
    withControl(io, options, 'set the routing rule', async (control, output, location) => {
      const key = { version: options.version, group: options.group ?? '' };
      const rule = await control.setRoute(service, ruleOf(name, options) as unknown as RouteRule, key);
      const rules = await control.routes(service, key);
      if (output.json) {
        output.document({ registry: location, service, ...key, action: 'route set', rule, routes: rules });
        return;
      }
      output.line(
        `rule ${rule.name} set (${service} ${key.version} at ${location}; consumers apply it within about a second)`,
      );
      printRules(output, [{ key: { name: service, ...key }, rules }]);
    }),
  );

  const rm = new Command('rm')
    .description('remove a routing rule')
    .argument('<service>', 'a service name')
    .argument('<name>', 'the rule name');
  addControlOptions(rm).action((service: string, name: string, options: ControlOptions) =>
    withControl(io, options, 'remove the routing rule', async (control, output, location) => {
      const key = { version: options.version, group: options.group ?? '' };
      const removed = await control.removeRoute(service, name, key);
      if (!removed)
        throw new CliError(ExitCode.Failed, `${service} has no routing rule ${name} at ${location}`);
      const rules = await control.routes(service, key);
      if (output.json) {
        output.document({
          registry: location,
          service,
          ...key,
          action: 'route rm',
          removed: name,
          routes: rules,
        });
        return;
      }
      output.line(`rule ${name} removed (${service} ${key.version} at ${location})`);
      if (rules.length > 0) printRules(output, [{ key: { name: service, ...key }, rules }]);
    }),
  );

  const explain = new Command('explain')
    .description('say which rules apply to one call and why each provider is kept or dropped')
    .argument('<service>', 'a service name')
    .option('--method <name>', 'the method called (default: the first the providers declare)')
    .option('--tag <tag>', "the call's routing tag")
    .option('--application <name>', 'the calling application')
    .option('--zone <zone>', "the caller's zone")
    .option('--host <host>', 'the calling host')
    .option('--attachment <key=value>', 'an attachment of the call (repeat)', collect);
  addControlOptions(explain).action((service: string, options: ExplainOptions) =>
    withControl(io, options, 'explain the routing', async (control, output) => {
      const attachments: Record<string, string> = {};
      for (const pair of options.attachment ?? []) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw usageError(`--attachment takes key=value, not "${pair}"`);
        attachments[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      const explained = await control.explainRoute(
        service,
        {
          ...(options.method !== undefined ? { method: options.method } : {}),
          ...(options.tag !== undefined ? { tag: options.tag } : {}),
          ...(options.application !== undefined ? { application: options.application } : {}),
          ...(options.zone !== undefined ? { zone: options.zone } : {}),
          ...(options.host !== undefined ? { host: options.host } : {}),
          attachments,
        },
        { version: options.version, group: options.group ?? '' },
      );
      if (output.json) {
        output.document(explained);
        return;
      }
      for (const line of explanationLines(explained)) output.line(line);
    }),
  );
  return command.addCommand(ls).addCommand(set).addCommand(rm).addCommand(explain);
}

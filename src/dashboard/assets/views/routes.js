// The routing rules of one service key (docs/routing.md), on its Overview: read-only here, changed with
// `callisto route set|rm` (the order below is the order a call meets them).
import { badge, h, table } from '../dom.js';

const ORDER = ['condition', 'tag', 'weight', 'zone'];

/** One line saying what a rule does, as `callisto route ls` says it. */
export function describeRoute(rule) {
  const forced = rule.force === true ? ' (forced)' : '';
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
    default:
      return '';
  }
}

export function routesSection(key) {
  const rules = [...(key.routes ?? [])].sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
  return [
    h('h3', {}, 'Routing rules'),
    rules.length === 0
      ? h('p', { class: 'muted routes-none' }, 'No routing rule: calls go to every healthy provider.')
      : table(
          null,
          ['Order', 'Rule', 'Kind', 'Definition'],
          rules.map((rule, i) => [
            String(i + 1),
            h('code', {}, rule.name),
            badge(rule.kind, 'ok'),
            describeRoute(rule),
          ]),
          { class: 'routes' },
        ),
  ];
}

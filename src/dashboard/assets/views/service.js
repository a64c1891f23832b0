// One service: the Overview tab (methods, live charts, providers, consumers) and the Actions tab.
import { get, post, serviceQuery } from '../api.js';
import { lineChart } from '../chart.js';
import { confirmAction } from '../confirm.js';
import { badge, formatAge, formatNumber, formatTime, h, keyLabel, replaceContent, table } from '../dom.js';
import { routesSection } from './routes.js';

/** A dashboard started with --read-only marks its page so: no Actions, no Try it. */
const READ_ONLY = document.documentElement.hasAttribute('data-read-only');
const TABS = [
  ['overview', 'Overview'],
  ['actions', 'Actions'],
  ['try', 'Try it'],
  ['config', 'Config'],
].filter(([id]) => !READ_ONLY || (id !== 'actions' && id !== 'try'));

/** The service's heading and tabs, shared by every tab. */
export function serviceHeader(name, tab) {
  const base = `#/service/${encodeURIComponent(name)}`;
  return [
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Services'), ' / '),
    h('h1', { class: 'service-name' }, name),
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Service pages' },
      TABS.map(([id, label]) =>
        h(
          'a',
          {
            href: id === 'overview' ? base : `${base}/${id}`,
            'aria-current': id === tab ? 'page' : undefined,
          },
          label,
        ),
      ),
    ),
  ];
}

const stateBadge = (state) =>
  badge(state, state === 'healthy' ? 'ok' : state === 'disabled' ? 'bad' : 'warn');
const ms = (v) => `${formatNumber(v, 2)} ms`;
const percent = (v) => `${formatNumber(v * 100, 1)} %`;
const perSecond = (v) => `${formatNumber(v, 1)}/s`;

function declarationText(method) {
  const d = method.declaration;
  if (!d) return h('span', { class: 'muted' }, '-');
  const parts = [];
  if (d.stream) parts.push(d.stream === 'bidi' ? 'two-way stream' : `${d.stream} stream`);
  if (d.idempotent) parts.push('idempotent');
  if (d.oneway) parts.push('one-way');
  if (d.timeoutMs !== undefined) parts.push(`timeout ${d.timeoutMs} ms`);
  if (d.hasSchema) parts.push('schema');
  return parts.length > 0 ? parts.join(', ') : 'plain';
}

function lastFailure(method) {
  const f = method.figures?.lastFailure;
  if (!f) return h('span', { class: 'muted' }, 'none');
  return h(
    'span',
    { class: 'failure' },
    h('strong', {}, f.code),
    ` ${f.message} `,
    f.ref ? h('span', { class: 'failure-ref' }, `ref ${f.ref} `) : null,
    h('span', { class: 'muted' }, `(${f.provider}, ${formatTime(f.time)})`),
  );
}

/** Streams open now on the reporting providers, for a method that streamed. */
function openStreams(method) {
  const open = method.figures?.openStreams;
  if (open === undefined) return h('span', { class: 'muted' }, '-');
  return h('span', { class: 'open-streams', 'data-open': String(open) }, String(open));
}

/** Min, mean and max latency of the latest window with calls (every reporting provider's). */
function latencyWindow(method) {
  const w = method.figures?.window;
  if (!w) return h('span', { class: 'muted' }, '-');
  return h(
    'span',
    {
      class: 'latency-window',
      title: `${w.calls} calls in a window of ${formatNumber(w.ms / 1000, 0)} s: min / mean / max`,
      'data-min': String(w.minMs),
      'data-mean': String(w.meanMs),
      'data-max': String(w.maxMs),
    },
    `${formatNumber(w.minMs, 2)} / ${formatNumber(w.meanMs, 2)} / ${ms(w.maxMs)}`,
  );
}

function charts(key) {
  if (key.metrics.waiting) return h('p', { class: 'notice waiting', role: 'note' }, key.metrics.waiting);
  const methods = key.methods.filter((m) => m.figures && m.figures.calls > 0);
  if (methods.length === 0) return h('p', { class: 'muted' }, 'No call has been counted yet.');
  const idle = key.methods.filter((m) => !methods.includes(m)).map((m) => m.name);
  const note = idle.length > 0 ? h('p', { class: 'muted small' }, `No call yet: ${idle.join(', ')}.`) : null;
  return [
    note,
    ...methods.map((method) => {
      const points = method.figures.points;
      const series = (field) => points.map((p) => p[field]);
      return h(
        'section',
        { class: 'method-charts', 'aria-label': `Live figures of ${method.name}` },
        h(
          'h4',
          {},
          method.name,
          ' ',
          h(
            'span',
            { class: 'muted' },
            `${method.figures.calls} calls, ${method.figures.failures} failed, ${method.figures.inFlight} in flight`,
          ),
          method.figures.queueP99 === undefined
            ? null
            : h(
                'span',
                {
                  class: 'muted queue-time',
                  'data-queue-p99': method.figures.queueP99,
                  title: 'p99 of how long calls waited between being read and their method starting to run',
                },
                `, queue p99 ${ms(method.figures.queueP99)}`,
              ),
        ),
        h(
          'div',
          { class: 'charts' },
          lineChart({
            title: 'calls/s',
            values: series('callsPerSec'),
            format: perSecond,
            metric: 'calls',
            method: method.name,
          }),
          lineChart({
            title: 'errors',
            values: series('errorRate'),
            format: percent,
            minMax: 0.01,
            metric: 'errors',
            method: method.name,
          }),
          lineChart({
            title: 'p50',
            values: series('p50'),
            format: ms,
            minMax: 0.1,
            metric: 'p50',
            method: method.name,
          }),
          lineChart({
            title: 'p99',
            values: series('p99'),
            format: ms,
            minMax: 0.1,
            metric: 'p99',
            method: method.name,
          }),
        ),
      );
    }),
  ];
}

function providersTable(key, now, withActions) {
  if (key.providers.length === 0) return h('p', { class: 'empty' }, 'No provider is registered.');
  const headers = withActions
    ? ['Address', 'State', 'Weight', 'Application', 'Actions']
    : ['Address', 'State', 'Weight', 'Application', 'PID', 'Started', 'Calls', 'Calls/s', 'Limit'];
  return table(
    'Providers',
    headers,
    key.providers.map((p) => {
      const weight =
        p.weight === p.registeredWeight ? String(p.weight) : `${p.weight} (registered ${p.registeredWeight})`;
      const common = [
        h('code', { class: 'address' }, p.address),
        stateBadge(p.state),
        weight,
        p.application || '-',
      ];
      if (withActions) return [...common, providerActions(key, p)];
      return [
        ...common,
        String(p.pid || '-'),
        h('span', { title: formatTime(p.startTime) }, `${formatAge(now - p.startTime)} ago`),
        p.figures
          ? h('span', { class: 'provider-calls', 'data-calls': p.figures.calls }, String(p.figures.calls))
          : h('span', { class: 'muted', title: p.adminError ?? 'no admin endpoints' }, '-'),
        p.figures ? perSecond(p.figures.callsPerSec) : '-',
        limitCell(p.figures?.adaptiveLimit),
      ];
    }),
    { class: 'providers', 'data-version': key.version, 'data-group': key.group },
  );
}

/**
 * A provider's adaptive concurrency limit: in flight / limit, "overloaded" while it refuses, what it
 * refused and admitted and its event loop's delay on hover; '-' when it is off or not reported.
 */
function limitCell(limit) {
  if (!limit) return h('span', { class: 'muted', title: 'adaptive limit off, or no admin endpoints' }, '-');
  const title = `${limit.inflight} in flight of a limit of ${limit.limit}; refused ${limit.refused}, admitted ${limit.admitted}; event-loop delay ${limit.loopDelayMs} ms`;
  return h(
    'span',
    {
      class: limit.overloaded ? 'adaptive-limit overloaded' : 'adaptive-limit',
      'data-limit': limit.limit,
      'data-refused': limit.refused,
      title,
    },
    `${limit.inflight} / ${limit.limit}`,
    limit.overloaded ? h('span', { class: 'badge badge-bad' }, ' overloaded') : null,
    limit.refused > 0 ? h('span', { class: 'muted' }, ` (${limit.refused} refused)`) : null,
  );
}

/** Why the figures of some providers are missing (an admin endpoint not asked, or not answering). */
function adminProblems(key) {
  const problems = key.providers.filter((p) => p.adminError);
  if (problems.length === 0) return null;
  return h(
    'ul',
    { class: 'admin-problems notice', 'aria-label': 'Admin endpoints' },
    ...problems.map((p) => h('li', {}, h('code', {}, p.address), `: ${p.adminError}`)),
  );
}

function consumersTable(key) {
  const problem = key.consumersError ? h('p', { class: 'notice bad' }, key.consumersError) : null;
  if (key.consumers.length === 0)
    return [
      problem,
      h('p', { class: 'empty' }, problem ? 'No consumer read.' : 'No consumer is registered.'),
    ];
  return [
    problem,
    table(
      'Consumers',
      ['Host', 'PID', 'Application', 'Started'],
      key.consumers.map((c) => [c.host, String(c.pid), c.application || '-', formatTime(c.startTime)]),
      { class: 'consumers' },
    ),
  ];
}

function keySection(key, body) {
  return h(
    'section',
    { class: 'key card', 'aria-label': `Version ${keyLabel(key)}` },
    h(
      'h2',
      {},
      `Version ${keyLabel(key)}`,
      ' ',
      h('span', { class: 'muted small' }, `in ${key.registries.join(', ')}`),
    ),
    key.disabled
      ? h('p', { class: 'notice bad' }, 'The whole service is disabled: consumers send it no call.')
      : null,
    body,
  );
}

function mountServicePage(main, banner, name, tab, render) {
  const content = h('div', { class: 'service-content' });
  replaceContent(main, ...serviceHeader(name, tab), banner, content);
  return {
    async update() {
      const data = await get(`/api/service?${serviceQuery(name)}`);
      replaceContent(
        content,
        data.keys.map((key) => keySection(key, render(key, data.time))),
      );
    },
  };
}

export function mountOverview(main, banner, name) {
  return mountServicePage(main, banner, name, 'overview', (key, now) => [
    h('h3', {}, 'Methods'),
    key.methods.length === 0
      ? h('p', { class: 'muted' }, 'The providers declare no method (any name may be called: see Try it).')
      : table(
          null,
          [
            'Method',
            'Declaration',
            'Calls',
            'Failed',
            'Open streams',
            'Latency min / mean / max',
            'Mock',
            'Last failure',
          ],
          key.methods.map((m) => [
            h('code', {}, m.name),
            declarationText(m),
            m.figures ? String(m.figures.calls) : '-',
            m.figures ? String(m.figures.failures) : '-',
            openStreams(m),
            latencyWindow(m),
            m.mock === 'off' ? h('span', { class: 'muted' }, 'off') : badge(m.mock, 'warn'),
            lastFailure(m),
          ]),
          { class: 'methods' },
        ),
    h('h3', {}, 'Live'),
    charts(key),
    h('h3', {}, 'Providers'),
    providersTable(key, now, false),
    adminProblems(key),
    h('h3', {}, 'Consumers'),
    consumersTable(key),
    routesSection(key),
  ]);
}

// ---- Actions

let afterAction = () => {};
/** Says what an action did, to everyone: on the page and to screen readers (a polite live region). */
const say = (text) => {
  document.getElementById('live').textContent = text;
  document.getElementById('announce').textContent = text;
};

function actionButton(label, dataKey, disabled, onclick) {
  return h('button', { type: 'button', class: 'small', 'data-key': dataKey, disabled, onclick }, label);
}

function apply(key, body, message) {
  return async () => {
    await post('/api/action', { service: key.service, version: key.version, group: key.group, ...body });
    say(message);
    afterAction();
  };
}

function providerActions(key, p) {
  const disabled = p.state === 'disabled';
  const toggle = disabled ? 'enable' : 'disable';
  const serviceDisabled = key.disabled;
  return h(
    'div',
    { class: 'button-row' },
    actionButton(
      toggle === 'disable' ? 'Disable' : 'Enable',
      `${toggle}-${p.address}`,
      serviceDisabled && toggle === 'enable',
      () =>
        confirmAction({
          heading: `${toggle === 'disable' ? 'Disable' : 'Enable'} ${p.address}?`,
          content: h(
            'p',
            {},
            toggle === 'disable'
              ? `Consumers of ${key.service} ${keyLabel(key)} stop sending calls to ${p.address}; it stays registered.`
              : `Consumers of ${key.service} ${keyLabel(key)} send calls to ${p.address} again.`,
          ),
          confirmLabel: toggle === 'disable' ? 'Disable' : 'Enable',
          run: apply(key, { action: toggle, provider: p.address }, `${p.address} ${toggle}d`),
        }),
    ),
    actionButton('Weight…', `weight-${p.address}`, false, () => {
      const input = h('input', {
        id: 'weight-input',
        type: 'number',
        min: 0,
        max: 10000,
        step: 1,
        value: p.weight,
        required: true,
      });
      confirmAction({
        heading: `Change the weight of ${p.address}`,
        content: [
          h('p', {}, `A provider gets a share of calls in proportion to its weight (now ${p.weight}).`),
          h('label', { for: 'weight-input' }, 'New weight (0–10000)'),
          input,
        ],
        confirmLabel: 'Set weight',
        run: () =>
          apply(
            key,
            { action: 'weight', provider: p.address, weight: Number(input.value) },
            `weight of ${p.address} set to ${input.value}`,
          )(),
      });
    }),
  );
}

function mockButton(key, method) {
  return actionButton('Mock mode…', `mock-${method.name}`, false, () => {
    const select = h(
      'select',
      { id: 'mock-select' },
      [
        ['off', 'off: calls go to providers'],
        ['force', 'force: consumers answer with the mock, no call is sent'],
        ['fail', 'fail: consumers answer with the mock when a call fails'],
      ].map(([value, label]) => h('option', { value, selected: value === method.mock }, label)),
    );
    confirmAction({
      heading: `Mock mode of ${method.name}`,
      content: [h('label', { for: 'mock-select' }, 'Mode'), select],
      confirmLabel: 'Switch',
      run: () =>
        apply(
          key,
          { action: 'mock', method: method.name, mode: select.value },
          `mock mode of ${method.name}: ${select.value}`,
        )(),
    });
  });
}

export function mountActions(main, banner, name) {
  const page = mountServicePage(main, banner, name, 'actions', (key) => {
    const k = { ...key, service: name };
    return [
      key.control.error ? h('p', { class: 'notice bad' }, key.control.error) : null,
      h('h3', {}, 'Service'),
      h(
        'p',
        { class: 'button-row' },
        key.disabled ? badge('disabled', 'bad') : badge('enabled', 'ok'),
        ' ',
        actionButton(
          key.disabled ? 'Enable the service' : 'Disable the service',
          `service-${key.version}-${key.group}`,
          false,
          () =>
            confirmAction({
              heading: `${key.disabled ? 'Enable' : 'Disable'} ${name} ${keyLabel(key)}?`,
              content: h(
                'p',
                {},
                key.disabled
                  ? 'Consumers send calls to its providers again.'
                  : 'Consumers send no call to any of its providers.',
              ),
              confirmLabel: key.disabled ? 'Enable' : 'Disable',
              run: apply(
                k,
                { action: key.disabled ? 'enable' : 'disable' },
                `${name} ${key.disabled ? 'enabled' : 'disabled'}`,
              ),
            }),
        ),
      ),
      h('h3', {}, 'Providers'),
      providersTable(k, Date.now(), true),
      h('h3', {}, 'Methods'),
      key.methods.length === 0
        ? h('p', { class: 'muted' }, 'The providers declare no method.')
        : table(
            null,
            ['Method', 'Mock mode', 'Action'],
            key.methods.map((m) => [
              h('code', {}, m.name),
              m.mock === 'off' ? 'off' : badge(m.mock, 'warn'),
              mockButton(k, m),
            ]),
            { class: 'mock-modes' },
          ),
    ];
  });
  afterAction = () => void page.update().catch(() => {});
  return page;
}

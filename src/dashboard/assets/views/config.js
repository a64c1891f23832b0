// Config: each provider's effective configuration (its admin endpoint `/config`), with the source of each value.
import { get, serviceQuery } from '../api.js';
import { h, replaceContent, table } from '../dom.js';
import { serviceHeader } from './service.js';

const show = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/** Entries `{ key, value, source }` wherever the answer keeps them, else undefined. */
function entriesOf(config) {
  const list = Array.isArray(config) ? config : (config?.keys ?? config?.entries);
  if (Array.isArray(list) && list.every((e) => e && typeof e === 'object' && 'key' in e)) return list;
  if (config && typeof config === 'object' && config.values && config.sources) {
    const out = [];
    const walk = (value, path) => {
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
      } else out.push({ key: path, value, source: config.sources[path] ?? 'default' });
    };
    walk(config.values, '');
    return out;
  }
  return undefined;
}

export function mountConfig(main, banner, name) {
  const content = h('div', { id: 'config' });
  const showDefaults = h('input', { type: 'checkbox', id: 'show-defaults' });
  replaceContent(
    main,
    ...serviceHeader(name, 'config'),
    h(
      'p',
      { class: 'toggle' },
      showDefaults,
      ' ',
      h('label', { for: 'show-defaults' }, 'Show the values left at their defaults'),
    ),
    banner,
    content,
  );
  let signature;
  let data;
  showDefaults.addEventListener('change', () => {
    signature = undefined;
    render();
  });
  const render = () => {
    const next = JSON.stringify(data) + showDefaults.checked;
    if (next === signature) return;
    signature = next;
    if (data.providers.length === 0) {
      replaceContent(content, h('p', { class: 'empty' }, 'No provider is registered.'));
      return;
    }
    replaceContent(
      content,
      data.providers.map((p) => {
        const all = p.config === undefined ? undefined : entriesOf(p.config);
        const entries = showDefaults.checked ? all : all?.filter((e) => e.source !== 'default');
        const hidden = (all?.length ?? 0) - (entries?.length ?? 0);
        return h(
          'section',
          { class: 'card provider-config', 'aria-label': `Configuration of ${p.address}` },
          h('h2', {}, h('code', {}, p.address), ' ', h('span', { class: 'muted small' }, p.application)),
          p.error
            ? h('p', { class: 'notice waiting' }, p.error)
            : entries
              ? [
                  table(
                    null,
                    ['Key', 'Value', 'Source'],
                    entries.map((e) => [h('code', {}, e.key), show(e.value), e.source ?? '-']),
                    { class: 'config' },
                  ),
                  hidden > 0
                    ? h('p', { class: 'muted small' }, `${hidden} values at their defaults not shown.`)
                    : null,
                ]
              : h('pre', { class: 'json' }, JSON.stringify(p.config, null, 2)),
        );
      }),
    );
  };
  return {
    async update() {
      data = await get(`/api/config?${serviceQuery(name)}`);
      render();
    },
  };
}

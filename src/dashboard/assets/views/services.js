// Services: every service key in the registries, with a search box.
import { get } from '../api.js';
import { badge, h, replaceContent, table } from '../dom.js';

export function mountServices(main, banner) {
  const search = h('input', {
    id: 'search',
    type: 'search',
    placeholder: 'Filter by name, version or group',
    'aria-controls': 'services',
    autocomplete: 'off',
  });
  const registries = h('section', { class: 'registries', 'aria-label': 'Registries' });
  const list = h('section', { id: 'services', 'aria-label': 'Service list' });
  replaceContent(
    main,
    h(
      'div',
      { class: 'title-row' },
      h('h1', {}, 'Services'),
      h('div', { class: 'search' }, h('label', { for: 'search' }, 'Search'), search),
    ),
    banner,
    registries,
    list,
  );
  let last;
  const render = () => {
    if (!last) return;
    const words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const shown = last.services.filter((s) => {
      const text = `${s.name} ${s.version} ${s.group}`.toLowerCase();
      return words.every((word) => text.includes(word));
    });
    replaceContent(
      registries,
      last.registries.map((r) =>
        h(
          'p',
          { class: `registry registry-${r.status}` },
          badge(
            r.status === 'connected' ? 'connected' : 'unreachable',
            r.status === 'connected' ? 'ok' : 'bad',
          ),
          ' ',
          h('code', {}, r.location),
          r.error ? h('span', { class: 'muted' }, ` ${r.error}`) : null,
          r.truncated ? h('span', { class: 'muted' }, ' (only the first keys are shown)') : null,
        ),
      ),
    );
    if (last.services.length === 0) {
      replaceContent(list, h('p', { class: 'empty' }, 'No service is registered yet.'));
      return;
    }
    const providerNames = new Set(shown.map((s) => s.name));
    replaceContent(
      list,
      h(
        'p',
        { class: 'muted summary' },
        `${providerNames.size} of ${new Set(last.services.map((s) => s.name)).size} services shown`,
      ),
      table(
        null,
        ['Service', 'Version', 'Group', 'Providers', 'Consumers', 'Health'],
        shown.map((s) => [
          h(
            'a',
            {
              href: `#/service/${encodeURIComponent(s.name)}`,
              'data-key': `svc-${s.name}-${s.version}-${s.group}`,
            },
            s.name,
          ),
          s.version,
          s.group || '-',
          h('span', { class: 'count', 'data-providers': s.providers }, String(s.providers)),
          String(s.consumers),
          s.health === 'ok' ? badge('ok') : badge('no providers', 'bad'),
        ]),
        { class: 'services' },
      ),
    );
  };
  search.addEventListener('input', render);
  return {
    async update() {
      last = await get('/api/overview');
      render();
    },
  };
}

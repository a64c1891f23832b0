// Try it: one call from the page, with JSON arguments, through a consumer reference as `callisto call` makes it.
import { get, post, serviceQuery } from '../api.js';
import { h, keyLabel, replaceContent } from '../dom.js';
import { serviceHeader } from './service.js';

/** The remote error's own name (` RangeError`), when it says more than the code. */
const ownName = (error) =>
  error.name && error.name !== error.code && error.name !== 'RpcError' ? ` ${error.name}` : '';

export function mountTry(main, banner, name) {
  const keySelect = h('select', { id: 'try-key', name: 'key' });
  const methodInput = h('input', {
    id: 'try-method',
    name: 'method',
    list: 'try-methods',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
  });
  // the first method is offered only in a field nobody has touched: the service's versions may load
  // while someone is typing, and their text must not be joined to it
  let methodTouched = false;
  methodInput.addEventListener('focus', () => {
    methodTouched = true;
  });
  methodInput.addEventListener('input', () => {
    methodTouched = true;
  });
  const methods = h('datalist', { id: 'try-methods' });
  const args = h('textarea', { id: 'try-args', name: 'args', rows: 6, spellcheck: 'false' }, '[]');
  const timeout = h('input', {
    id: 'try-timeout',
    name: 'timeout',
    type: 'number',
    min: 1,
    max: 60000,
    value: 5000,
  });
  const result = h('section', { id: 'try-result', 'aria-live': 'polite', 'aria-label': 'Result' });
  // disabled until the service's versions are loaded: a click before then would have nothing to call
  const button = h('button', { type: 'submit', id: 'try-call', disabled: true }, 'Call');
  const form = h(
    'form',
    { class: 'card try', id: 'try-form' },
    h('div', { class: 'field' }, h('label', { for: 'try-key' }, 'Version'), keySelect),
    h('div', { class: 'field' }, h('label', { for: 'try-method' }, 'Method'), methodInput, methods),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'try-args' }, 'Arguments (a JSON array, one element per argument)'),
      args,
      h(
        'p',
        { class: 'muted small' },
        'e.g. [7] or ["Ann", {"$t": "D", "v": "2024-05-01T12:00:00Z"}]; tags as in ',
        h('code', {}, 'callisto call --help'),
        '.',
      ),
    ),
    h('div', { class: 'field narrow-field' }, h('label', { for: 'try-timeout' }, 'Timeout (ms)'), timeout),
    h('div', { class: 'buttons' }, button),
  );
  replaceContent(main, ...serviceHeader(name, 'try'), banner, form, result);
  let keys = [];

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = keys[Number(keySelect.value)] ?? keys[0];
    if (!key) return;
    button.disabled = true;
    replaceContent(result, h('p', { class: 'muted' }, 'Calling…'));
    try {
      const answer = await post('/api/call', {
        service: name,
        version: key.version,
        group: key.group,
        method: methodInput.value.trim(),
        args: args.value,
        timeoutMs: Number(timeout.value),
      });
      const timing = h('p', { class: 'muted timing' }, `in ${answer.elapsedMs.toFixed(1)} ms`);
      replaceContent(
        result,
        answer.ok
          ? h(
              'div',
              { class: 'card result ok' },
              h('h2', {}, 'Result'),
              h('pre', { class: 'json', id: 'try-output' }, JSON.stringify(answer.result, null, 2)),
              timing,
            )
          : h(
              'div',
              { class: 'card result failed' },
              h('h2', {}, 'Error'),
              h(
                'p',
                { class: 'error', id: 'try-error' },
                h('strong', {}, answer.error.code),
                `${ownName(answer.error)}: ${answer.error.message}`,
              ),
              answer.error.details
                ? h('pre', { class: 'json' }, JSON.stringify(answer.error.details, null, 2))
                : null,
              timing,
            ),
      );
    } catch (error) {
      replaceContent(result, h('p', { class: 'error', id: 'try-error', role: 'alert' }, error.message));
    } finally {
      button.disabled = keys.length === 0;
    }
  });

  return {
    async update() {
      const data = await get(`/api/service?${serviceQuery(name)}`);
      const signature = JSON.stringify(
        data.keys.map((k) => [k.version, k.group, k.methods.map((m) => m.name)]),
      );
      if (signature === keySelect.dataset.signature) return;
      keySelect.dataset.signature = signature;
      const chosen = keySelect.value;
      keys = data.keys;
      button.disabled = keys.length === 0;
      replaceContent(
        keySelect,
        keys.map((key, i) => h('option', { value: i, selected: String(i) === chosen }, keyLabel(key))),
      );
      replaceContent(
        methods,
        // `$echo`: every provided service answers it, through its filters
        [...new Set([...keys.flatMap((k) => k.methods.map((m) => m.name)), '$echo'])].map((m) =>
          h('option', { value: m }),
        ),
      );
      if (!methodTouched && !methodInput.value && keys[0]?.methods[0]) {
        methodInput.value = keys[0].methods[0].name;
      }
    },
  };
}

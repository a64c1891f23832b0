// The token form, shown when the API answers 401.
import { setToken, token } from '../api.js';
import { h, replaceContent } from '../dom.js';

export function mountToken(main, message, done) {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card narrow', id: 'token-form' },
    h('h1', {}, 'This dashboard needs its token'),
    h('p', { class: 'error', role: 'alert' }, token() ? `The token was refused: ${message}` : message),
    h(
      'p',
      {},
      'It was given to ',
      h('code', {}, 'callisto dashboard --token'),
      '; the address it printed carries it after #token=.',
    ),
    h('label', { for: 'token' }, 'Token'),
    input,
    h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Use this token')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    done();
  });
  replaceContent(main, form);
  input.focus();
  return { update: async () => {} };
}

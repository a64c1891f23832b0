// Building the page without a framework: h() makes elements, replaceContent() swaps a section's
// content and keeps keyboard focus on the element with the same data-key.

/** h('a', { href: '#/', class: 'x' }, 'text', child) */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `container` shows; focus stays on the element with the same data-key, if any. */
export function replaceContent(container, ...children) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : undefined;
  container.replaceChildren();
  append(container, children);
  if (key !== undefined) container.querySelector(`[data-key="${CSS.escape(key)}"]`)?.focus();
}

/** A table with a header row; `rows` are arrays of cells (strings or nodes). */
export function table(caption, headers, rows, attributes = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      attributes,
      caption ? h('caption', {}, caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((cell) => h('td', {}, cell)),
          ),
        ),
      ),
    ),
  );
}

export function badge(text, kind = text) {
  return h('span', { class: `badge badge-${kind}` }, text);
}

export function formatTime(ms) {
  if (!ms) return '-';
  return new Date(ms).toLocaleString();
}

export function formatAge(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function formatNumber(value, digits = 1) {
  if (!Number.isFinite(value)) return '-';
  if (Math.abs(value) >= 100 || Number.isInteger(value)) return String(Math.round(value));
  return value.toFixed(digits);
}

/** `example.UserService 1.0.0`, with the group when there is one. */
export function keyLabel(key) {
  return `${key.version}${key.group ? ` · group ${key.group}` : ''}`;
}

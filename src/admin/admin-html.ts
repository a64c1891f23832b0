/**
 * The admin endpoints' JSON as a minimal HTML page, for a browser (`Accept: text/html`): objects become
 * definition tables, arrays of objects become tables with a column per key. No script, no external
 * resource; every value is escaped, and the page's content security policy allows its own stylesheet
 * (by its hash) and nothing else.
 */
import { createHash } from 'node:crypto';
import { securityHeaders } from '../http/security-headers.js';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function render(value: unknown, depth: number): string {
  if (value === null || value === undefined) return '<span class="none">—</span>';
  if (typeof value !== 'object') return escapeHtml(String(value));
  if (depth > 6) return `<code>${escapeHtml(JSON.stringify(value))}</code>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return '<span class="none">none</span>';
    if (value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
      const columns = [...new Set(value.flatMap((item) => Object.keys(item as object)))];
      const head = columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('');
      const rows = value
        .map(
          (item) =>
            `<tr>${columns.map((column) => `<td>${render((item as Record<string, unknown>)[column], depth + 1)}</td>`).join('')}</tr>`,
        )
        .join('');
      return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
    }
    return `<ul>${value.map((item) => `<li>${render(item, depth + 1)}</li>`).join('')}</ul>`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '<span class="none">{}</span>';
  return `<table class="kv">${entries
    .map(([key, item]) => `<tr><th>${escapeHtml(key)}</th><td>${render(item, depth + 1)}</td></tr>`)
    .join('')}</table>`;
}

const STYLE =
  'body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.2em 0}' +
  'th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#f4f4f4}' +
  '.none{color:#999}nav a{margin-right:1em}';

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** The headers a page is sent with: the security headers, with a policy that allows its stylesheet only. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = securityHeaders({
  contentSecurityPolicy: `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; frame-ancestors 'none'`,
});

/** A page titled `title` showing `body` (the endpoint's JSON value). */
export function htmlPage(title: string, body: unknown, links: readonly string[]): string {
  const nav = links.map((link) => `<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><nav>${nav}</nav><h1>${escapeHtml(title)}</h1>${render(body, 0)}</body></html>`;
}

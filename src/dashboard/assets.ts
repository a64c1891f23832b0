/**
 * The page's files (HTML, CSS, JavaScript modules) served from the `assets` folder next to this module:
 * src/dashboard/assets in the sources, dist/dashboard/assets in the package (copied by `npm run build`).
 * The list of files is read once at start; nothing outside it is served.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAGE_CONTENT_SECURITY_POLICY, securityHeaders, sendAnswer } from '../internal.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The security headers of every listener, with the page's policy: its own files, no inline script. */
const PAGE_HEADERS = securityHeaders({
  contentSecurityPolicy: PAGE_CONTENT_SECURITY_POLICY,
  cacheControl: 'no-cache',
});

export const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

export interface Assets {
  /** Serves `/` (index.html) and `/assets/<file>`; false when `pathname` is not one of them. */
  serve(pathname: string, response: ServerResponse): boolean;
}

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return listFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`);
    return TYPES[path.extname(entry.name)] ? [`${prefix}${entry.name}`] : [];
  });
}

/** Where index.html says the page's secret goes: `<meta name="callisto-page" content="">`. */
const SECRET_SLOT = '<meta name="callisto-page" content="" />';

/** What index.html is served with. */
export interface PageSettings {
  /** Written into its `callisto-page` meta element, for the page's script to send back (http-basics.ts). */
  readonly secret: string;
  /** Marks the page `data-read-only`: it offers no actions and no Try it. */
  readonly readOnly: boolean;
}

/** The files of `dir`, index.html filled in with `page`. */
export function loadAssets(dir = ASSETS_DIR, page: PageSettings = { secret: '', readOnly: false }): Assets {
  let names: string[];
  try {
    names = listFiles(dir);
  } catch (error) {
    throw new Error(
      `the dashboard's files are missing from ${dir} (${(error as Error).message}); rebuild with npm run build`,
    );
  }
  if (!names.includes('index.html')) throw new Error(`the dashboard's index.html is missing from ${dir}`);
  const read = (name: string): Buffer => {
    const body = readFileSync(path.join(dir, name));
    if (name !== 'index.html') return body;
    const text = body.toString('utf8');
    if (!text.includes(SECRET_SLOT))
      throw new Error(`the dashboard's index.html in ${dir} has no ${SECRET_SLOT}`);
    const filled = text.replace(SECRET_SLOT, `<meta name="callisto-page" content="${page.secret}" />`);
    return Buffer.from(
      page.readOnly ? filled.replace('<html lang="en">', '<html lang="en" data-read-only>') : filled,
    );
  };
  const files = new Map(names.map((name) => [name, { body: read(name), type: TYPES[path.extname(name)]! }]));
  return {
    serve(pathname, response) {
      const name =
        pathname === '/' || pathname === '/index.html'
          ? 'index.html'
          : pathname.startsWith('/assets/')
            ? pathname.slice(8)
            : undefined;
      const file = name === undefined ? undefined : files.get(name);
      if (!file) return false;
      sendAnswer(response, { status: 200, contentType: file.type, body: file.body, headers: PAGE_HEADERS });
      return true;
    },
  };
}

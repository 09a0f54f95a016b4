import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/paths.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';

/**
 * The admin console's files (src/console/: its script modules compiled to dist/console/, its
 * stylesheet as written), served at /admin/ without the key: they hold nothing secret, and the
 * page asks for the key before it calls anything. Read on the first ask and kept (about 40 KB), so
 * a gateway whose console nobody opens pays nothing for it.
 *
 * Content-Security-Policy: scripts, styles and calls only from this origin; no inline script or
 * style, no frames, no forms posted elsewhere, no plugins. Every value the pages show is set as
 * text (src/console/dom.ts), so what a vendor or a token name says cannot run either.
 */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
} as const;

const TYPES = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

interface ConsoleFiles {
  readonly index: string;
  readonly files: ReadonlyMap<string, { readonly text: string; readonly contentType: string }>;
}

let loaded: ConsoleFiles | null = null;

function load(): ConsoleFiles {
  if (loaded) return loaded;
  const files = new Map<string, { text: string; contentType: string }>();
  const add = (dir: string, ext: keyof typeof TYPES) => {
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith(`.${ext}`))
      .sort())
      files.set(name, { text: readFileSync(join(dir, name), 'utf8'), contentType: TYPES[ext] });
  };
  add(join(PROJECT_ROOT, 'dist/console'), 'js');
  add(join(PROJECT_ROOT, 'src/console'), 'css');
  if (!files.has('main.js')) throw new Error('the admin console is not built (dist/console/main.js is missing): run npm run build');
  // Every module is announced up front, so the browser fetches them at once rather than finding
  // them import by import: the page loads in one round trip after its HTML.
  const preload = [...files.keys()].filter((n) => n.endsWith('.js')).map((n) => `<link rel="modulepreload" href="/admin/console/${n}">`);
  const index = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    '<title>Generation Gateway</title>',
    '<link rel="stylesheet" href="/admin/console/console.css">',
    ...preload,
    '<script type="module" src="/admin/console/main.js"></script>',
    '</head>',
    '<body><div id="app"></div><noscript>The console needs JavaScript.</noscript></body>',
    '</html>',
    '',
  ].join('\n');
  loaded = { index, files };
  return loaded;
}

/** `GET /admin/`: the console's page. */
export async function consolePage(): Promise<AdminAnswer> {
  return { text: load().index, contentType: 'text/html; charset=utf-8', headers: HEADERS };
}

/** `GET /admin`: the console lives at /admin/ (its files are addressed from there). */
export async function consoleRedirect(): Promise<AdminAnswer> {
  return { text: '', contentType: 'text/plain; charset=utf-8', status: 308, headers: { location: '/admin/' } };
}

/** `GET /admin/console/{file}`: one of its scripts or its stylesheet; any other name is 404. */
export async function consoleFile({ params }: AdminContext): Promise<AdminAnswer> {
  const file = load().files.get(params.file ?? '');
  if (!file) throw new GatewayError('not_found', 'no such console file');
  return { text: file.text, contentType: file.contentType, headers: HEADERS };
}

/**
 * The admin console: a sign-in form, then one page per concern, each drawn from the admin API.
 * The key lives in this tab's sessionStorage only (gone when the tab closes, never sent anywhere
 * but the gateway's own admin API, never in the address). Pages are addressed as `#page?params`.
 */
import { ApiError, apiWithKey, type Api } from './api.js';
import { h } from './dom.js';
import type { Page } from './page.js';
import { PAGES } from './pages.js';

const KEY = 'gateway-admin-key';
const root = document.getElementById('app') ?? document.body;

function signIn(failure?: string): void {
  window.onhashchange = null; // the pages of a signed-out session draw no more
  const key = h('input', {
    type: 'password',
    name: 'key',
    autocomplete: 'current-password',
    required: true,
    'aria-label': 'admin key',
    placeholder: 'GATEWAY_ADMIN_KEY',
  });
  const said = h('p', { class: 'notice error', 'data-testid': 'sign-in-error' }, failure ?? '');
  const form = h(
    'form',
    {
      class: 'sign-in',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const api = apiWithKey(key.value.trim());
        try {
          await api.get('/admin/config');
        } catch (err) {
          // A gateway with a fixed configuration has no /admin/config (404) but took the key.
          if (!(err instanceof ApiError && err.status === 404)) {
            said.textContent =
              err instanceof ApiError && err.status === 401 ? 'The gateway refused this key.' : String(err instanceof Error ? err.message : err);
            return;
          }
        }
        sessionStorage.setItem(KEY, key.value.trim());
        start(api);
      },
    },
    h('h1', {}, 'Generation Gateway'),
    h('p', {}, 'Sign in with the admin key (GATEWAY_ADMIN_KEY). It is kept for this tab only.'),
    key,
    h('button', { type: 'submit' }, 'Sign in'),
    said,
  );
  root.replaceChildren(form);
  key.focus();
}

function parseHash(): { page: string; params: URLSearchParams } {
  const [page = '', query = ''] = location.hash.replace(/^#/, '').split('?', 2);
  return { page: PAGES.some((p) => p.id === page) ? page : PAGES[0].id, params: new URLSearchParams(query) };
}

function start(api: Api): void {
  const nav = h('nav', {});
  const main = h('main', { id: 'page' });
  const signOut = h(
    'button',
    { type: 'button', class: 'sign-out', onclick: () => (sessionStorage.removeItem(KEY), signIn(), (location.hash = '')) },
    'Sign out',
  );
  root.replaceChildren(h('header', {}, h('span', { class: 'brand' }, 'Generation Gateway'), nav, signOut), main);
  let drawing = 0;
  const draw = async () => {
    const { page, params } = parseHash();
    // parseHash gives one of the pages.
    const entry = PAGES.find((p) => p.id === page) ?? PAGES[0];
    nav.replaceChildren(...PAGES.map((p) => h('a', { href: `#${p.id}`, class: p.id === page ? 'current' : null }, p.title)));
    document.title = `${entry.title} · Generation Gateway`;
    const mine = ++drawing;
    main.setAttribute('aria-busy', 'true');
    let content: Node;
    try {
      content = await (entry.page as Page)({
        api,
        params,
        go: (to, p) => (location.hash = `${to}${p ? `?${new URLSearchParams(p)}` : ''}`),
        refresh: () => void draw(),
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        sessionStorage.removeItem(KEY);
        return signIn('The gateway no longer takes this key: sign in again.');
      }
      content = h('p', { class: 'notice error', 'data-testid': 'page-error' }, e instanceof Error ? e.message : String(e));
    }
    if (mine !== drawing) return; // a later draw started: it wins
    main.replaceChildren(h('h1', {}, entry.title), content);
    main.setAttribute('aria-busy', 'false');
    main.dataset.page = page;
  };
  window.onhashchange = () => void draw();
  void draw();
}

const saved = sessionStorage.getItem(KEY);
if (saved) start(apiWithKey(saved));
else signIn();

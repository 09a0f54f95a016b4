import { ApiError } from './api.js';
import { h, section, stat, table, when } from './dom.js';
import type { Page } from './page.js';

interface ConfigReport {
  replica: string;
  version: string;
  generation: number;
  loaded_at: string;
  dirs: string[];
  watching: boolean;
  routes: number;
  channels: string[];
  last_reload: { at: string; ok: boolean; reason: string; ms: number; issues: string[] } | null;
  replicas: { replica: string; version: string; generation: number; loaded_at: string; last_reload_ok: boolean; seen_at: string }[];
}

export const configPage: Page = async ({ api, refresh }) => {
  const c = await api.get<ConfigReport>('/admin/config');
  const outcome = h('p', { class: 'outcome', 'data-testid': 'reload-outcome' });
  const reload = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        reload.disabled = true;
        outcome.textContent = 'Reloading…';
        try {
          const r = await api.post<{ generation: number; ms: number; warnings: string[] }>('/admin/reload');
          outcome.textContent = `Generation ${r.generation} serving, built in ${r.ms} ms${r.warnings.length ? `, ${r.warnings.length} warning(s)` : ''}.`;
          setTimeout(refresh, 800);
        } catch (e) {
          outcome.textContent = e instanceof ApiError ? e.message : String(e);
          outcome.classList.add('error');
        } finally {
          reload.disabled = false;
        }
      },
    },
    'Reload now',
  );
  const last = c.last_reload;
  return h(
    'div',
    {},
    section(
      'Configuration serving',
      h(
        'div',
        { class: 'stats' },
        stat('version', h('code', { 'data-testid': 'version' }, c.version)),
        stat('generation', c.generation),
        stat('loaded', when(c.loaded_at)),
        stat('routes', c.routes),
        stat('channels serving', c.channels.length),
        stat('watching files', c.watching ? 'yes' : 'no'),
      ),
      h(
        'p',
        {},
        'Read from ',
        c.dirs.flatMap((d, i) => [i ? ', ' : '', h('code', {}, d)]),
      ),
      h('p', {}, reload),
      outcome,
    ),
    section(
      'Last reload',
      last === null
        ? h('p', { class: 'empty', 'data-testid': 'last-reload' }, 'No reload since the start.')
        : h(
            'div',
            { 'data-testid': 'last-reload' },
            h(
              'div',
              { class: 'stats' },
              stat('when', when(last.at)),
              stat('why', last.reason),
              stat('took', `${last.ms} ms`),
              stat('outcome', h('span', { class: `badge ${last.ok ? 'closed' : 'open'}` }, last.ok ? 'ok' : 'failed: the previous configuration serves')),
            ),
            last.issues.length
              ? h(
                  'ul',
                  { class: 'issues' },
                  last.issues.map((i) => h('li', {}, h('code', {}, i))),
                )
              : h('p', { class: 'empty' }, 'No problem reported.'),
          ),
    ),
    section(
      'Replicas',
      table<ConfigReport['replicas'][number]>(
        [
          { label: 'replica', cell: (r) => r.replica },
          { label: 'version', cell: (r) => h('code', {}, r.version.slice(0, 12)) },
          { label: 'generation', cell: (r) => r.generation, numeric: true },
          { label: 'loaded', cell: (r) => when(r.loaded_at) },
          { label: 'last reload', cell: (r) => (r.last_reload_ok ? 'ok' : 'failed') },
          { label: 'seen', cell: (r) => when(r.seen_at) },
        ],
        c.replicas,
      ),
    ),
  );
};

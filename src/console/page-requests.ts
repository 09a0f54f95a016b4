import { h, section, table, when } from './dom.js';
import { shortId, tokenLabel } from './ids.js';
import type { Page } from './page.js';
import { urlFilters } from './url-filters.js';

/** The filters of GET /admin/requests the page offers, in its form's order. */
const FILTERS = ['token', 'model', 'route', 'status', 'error', 'request_id', 'task', 'from', 'to'] as const;

interface RequestView {
  id: string;
  at: number;
  request_id: string;
  token_id: string | null;
  /** Null without a token, or once it is deleted. */
  token_name: string | null;
  route: string;
  model: string | null;
  channel: string | null;
  status: number;
  error: string | null;
  ms: number;
  units: number | null;
  task_id: string | null;
}

const statusBadge = (s: number) => h('span', { class: `badge ${s < 400 ? 'completed' : 'failed'}` }, String(s));

/**
 * The request log (GET /admin/requests): one line per public request, newest first, filtered and
 * paged as the route is. `from` and `to` take what the route takes (Unix ms, a date, an ISO time).
 */
export const requestsPage: Page = async ({ api, params, go }) => {
  const { query, form, current } = urlFilters(
    'requests',
    FILTERS,
    { params, go },
    { label: (f) => f.replace('_', ' '), size: (f) => (f === 'status' ? 4 : 14) },
  );
  const { requests, next } = await api.get<{ requests: RequestView[]; next: string | null }>(`/admin/requests?${query}`);
  return h(
    'div',
    {},
    section('Filter', form),
    section(
      'Requests, newest first',
      table<RequestView>(
        [
          { label: 'time', cell: (r) => when(r.at) },
          { label: 'request id', cell: (r) => shortId(r.request_id) },
          { label: 'token', cell: (r) => tokenLabel(r.token_id, r.token_name, r.token_id ? `#tokens?token=${encodeURIComponent(r.token_id)}` : undefined) },
          { label: 'route', cell: (r) => r.route },
          { label: 'model', cell: (r) => r.model ?? '—' },
          { label: 'channel', cell: (r) => r.channel ?? '—' },
          { label: 'status', cell: (r) => statusBadge(r.status) },
          { label: 'error', cell: (r) => r.error ?? '' },
          { label: 'ms', cell: (r) => r.ms, numeric: true },
          { label: 'units', cell: (r) => r.units ?? '—', numeric: true },
          { label: 'task', cell: (r) => (r.task_id ? shortId(r.task_id, `#tasks?id=${encodeURIComponent(r.task_id)}`) : '') },
        ],
        requests,
        { empty: 'No request matches.', testid: 'requests' },
      ),
      next ? h('p', {}, h('button', { type: 'button', onclick: () => go('requests', { ...current, before: next }) }, 'Older requests')) : null,
    ),
  );
};

import { h, section, table, when } from './dom.js';
import { shortId, tokenLabel } from './ids.js';
import type { Page } from './page.js';
import { urlFilters } from './url-filters.js';

const FILTERS = ['actor', 'action', 'target', 'from', 'to'] as const;

interface AuditView {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  /** The name of the token a `token.*` action's target is; null otherwise. */
  target_name: string | null;
  before: unknown;
  after: unknown;
}

/** What changed between before and after, field by field, for a token's record; the whole value otherwise. */
function change(a: AuditView): string {
  const { before, after } = a;
  if (before && after && typeof before === 'object' && typeof after === 'object') {
    const b = before as Record<string, unknown>;
    const n = after as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(b), ...Object.keys(n)])].filter((k) => JSON.stringify(b[k]) !== JSON.stringify(n[k]));
    return keys.map((k) => `${k}: ${JSON.stringify(b[k] ?? null)} → ${JSON.stringify(n[k] ?? null)}`).join(', ') || 'no change';
  }
  if (before === null) return `created ${JSON.stringify(after)}`;
  if (after === null) return `was ${JSON.stringify(before)}`;
  return `${JSON.stringify(before)} → ${JSON.stringify(after)}`;
}

/** The audit log (GET /admin/audit): who changed what, newest first, filtered and paged as the route is. */
export const auditPage: Page = async ({ api, params, go }) => {
  const { query, form, current } = urlFilters('audit', FILTERS, { params, go });
  const { audit, next } = await api.get<{ audit: AuditView[]; next: string | null }>(`/admin/audit?${query}`);
  return h(
    'div',
    {},
    section('Filter', form),
    section(
      'Operator actions, newest first',
      table<AuditView>(
        [
          { label: 'time', cell: (a) => when(a.at) },
          { label: 'actor', cell: (a) => h('code', {}, a.actor) },
          { label: 'action', cell: (a) => a.action },
          {
            label: 'target',
            cell: (a) =>
              a.target === null
                ? '—'
                : a.target_name
                  ? tokenLabel(a.target, a.target_name, `#tokens?token=${encodeURIComponent(a.target)}`)
                  : shortId(a.target),
          },
          { label: 'change', cell: change },
        ],
        audit,
        { empty: 'No action matches.', testid: 'audit' },
      ),
      next ? h('p', {}, h('button', { type: 'button', onclick: () => go('audit', { ...current, before: next }) }, 'Older actions')) : null,
    ),
  );
};

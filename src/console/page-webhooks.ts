/**
 * The Webhooks page (docs/webhooks.md): the endpoints (registered here, enabled or disabled,
 * rotated, deleted; a new secret shown once), and the delivery log, filtered as its admin route is,
 * each delivery with "Send again". Every action is one admin route.
 */
import { ApiError } from './api.js';
import { h, section, table, when } from './dom.js';
import { shortId, tokenLabel } from './ids.js';
import type { Page, PageContext } from './page.js';
import { urlFilters } from './url-filters.js';

interface Endpoint {
  id: string;
  token_id: string | null;
  /** In the list: null for a group's endpoint or a deleted token. */
  token_name?: string | null;
  group: string | null;
  url: string | null;
  callback_origins: string[] | null;
  events: string[];
  progress_interval_seconds: number;
  enabled: boolean;
  description: string | null;
  previous_secret_expires_at: string | null;
}

interface Delivery {
  id: string;
  endpoint_id: string;
  task_id: string;
  event: string;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
}

const EVENTS = ['task.completed', 'task.failed', 'task.cancelled', 'task.progress'];
const FILTERS = ['endpoint', 'task', 'status'] as const;

/** A secret the page shows once on its next drawing, then forgets. */
let shown: { text: string; secret: string } | null = null;

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** Runs an action: its failure is said in the notice; on success the page is drawn again. */
async function act(ctx: PageContext, notice: HTMLElement, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    ctx.refresh();
  } catch (e) {
    notice.textContent = message(e);
    notice.className = 'notice error';
  }
}

/** The form that registers an endpoint for a token or a group. */
function createForm(ctx: PageContext, notice: HTMLElement): HTMLElement {
  const ownerKind = h(
    'select',
    { name: 'owner_kind', 'aria-label': 'owner kind' },
    h('option', { value: 'token' }, 'token'),
    h('option', { value: 'group' }, 'group'),
  );
  const owner = h('input', { name: 'owner', placeholder: 'token name or id, or group', 'aria-label': 'owner', required: true });
  const url = h('input', { name: 'url', placeholder: 'https://hooks.example.com/gateway', 'aria-label': 'url', class: 'wide', required: true });
  const boxes = EVENTS.map((e) => [e, h('input', { type: 'checkbox', name: e, checked: e !== 'task.progress', 'aria-label': e })] as const);
  const progress = h('input', { name: 'progress', type: 'number', min: 1, step: 1, value: 30, 'aria-label': 'progress interval seconds', class: 'narrow' });
  const submit = () =>
    act(ctx, notice, async () => {
      const body = {
        [ownerKind.value]: owner.value.trim(),
        url: url.value.trim(),
        events: boxes.filter(([, b]) => b.checked).map(([e]) => e),
        progress_interval_seconds: Number(progress.value),
      };
      const made = await ctx.api.post<Endpoint & { secret: string }>('/admin/webhooks/endpoints', body);
      shown = { text: `Endpoint ${made.id} registered. Its secret, shown this once:`, secret: made.secret };
    });
  return h(
    'form',
    { class: 'inline', 'aria-label': 'register an endpoint', onsubmit: (e: Event) => (e.preventDefault(), void submit()) },
    ownerKind,
    owner,
    url,
    boxes.map(([e, b]) => h('label', {}, b, ` ${e}`)),
    h('label', {}, 'progress every ', progress, ' s'),
    h('button', { type: 'submit' }, 'Register'),
  );
}

/** The actions of one endpoint's row. */
function endpointActions(ctx: PageContext, e: Endpoint, notice: HTMLElement): HTMLElement {
  const path = `/admin/webhooks/endpoints/${encodeURIComponent(e.id)}`;
  const button = (label: string, run: () => Promise<unknown>) => h('button', { type: 'button', onclick: () => void act(ctx, notice, run) }, label);
  return h(
    'span',
    {},
    button(e.enabled ? 'Disable' : 'Enable', () => ctx.api.post(path, { enabled: !e.enabled })),
    button('Rotate secret', async () => {
      const r = await ctx.api.post<{ secret: string }>(`${path}/rotate`, { grace_seconds: 86_400 });
      shown = { text: `New secret of ${e.id}, shown this once (the old one signs too for 24 hours):`, secret: r.secret };
    }),
    button('Delete', () => ctx.api.del(path)),
    h('button', { type: 'button', onclick: () => ctx.go('webhooks', { endpoint: e.id }) }, 'Deliveries'),
  );
}

export const webhooksPage: Page = async (ctx) => {
  const { query, form, current } = urlFilters('webhooks', FILTERS, ctx);
  const [{ endpoints }, { deliveries, next }] = await Promise.all([
    ctx.api.get<{ endpoints: Endpoint[] }>('/admin/webhooks/endpoints'),
    ctx.api.get<{ deliveries: Delivery[]; next: string | null }>(`/admin/webhooks/deliveries?${query}`),
  ]);
  const notice = h('p', { class: 'notice', 'data-testid': 'webhooks-notice' });
  const secret =
    shown && h('div', { class: 'notice key', 'data-testid': 'new-secret' }, h('p', {}, shown.text), h('code', { 'data-testid': 'secret' }, shown.secret));
  shown = null;
  return h(
    'div',
    {},
    secret,
    notice,
    section('Register an endpoint', createForm(ctx, notice)),
    section(
      'Endpoints',
      table<Endpoint>(
        [
          { label: 'id', cell: (e) => shortId(e.id) },
          {
            label: 'owner',
            cell: (e) =>
              e.token_id ? ['token ', tokenLabel(e.token_id, e.token_name, `#tokens?token=${encodeURIComponent(e.token_id)}`)] : `group ${e.group}`,
          },
          { label: 'sends to', cell: (e) => e.url ?? `callback URLs within ${(e.callback_origins ?? []).join(', ')}` },
          { label: 'events', cell: (e) => e.events.join(', ') },
          {
            label: 'state',
            cell: (e) =>
              (e.enabled ? 'enabled' : 'disabled') + (e.previous_secret_expires_at ? ` (old secret until ${when(e.previous_secret_expires_at)})` : ''),
          },
          { label: '', cell: (e) => endpointActions(ctx, e, notice) },
        ],
        endpoints,
        { empty: 'No endpoint yet.', testid: 'endpoints' },
      ),
    ),
    section(
      'Deliveries, newest first',
      form,
      table<Delivery>(
        [
          { label: 'time', cell: (d) => when(d.created_at) },
          { label: 'event', cell: (d) => d.event },
          { label: 'task', cell: (d) => shortId(d.task_id, `#tasks?id=${encodeURIComponent(d.task_id)}`) },
          { label: 'to', cell: (d) => d.url },
          { label: 'status', cell: (d) => h('span', { class: `badge ${d.status}`, 'data-testid': 'delivery-status' }, d.status) },
          { label: 'attempts', cell: (d) => String(d.attempts), numeric: true },
          { label: 'last answer', cell: (d) => (d.last_status_code !== null ? String(d.last_status_code) : (d.last_error ?? '—')) },
          { label: 'next', cell: (d) => when(d.next_attempt_at) },
          {
            label: '',
            cell: (d) =>
              h(
                'button',
                { type: 'button', onclick: () => void act(ctx, notice, () => ctx.api.post(`/admin/webhooks/deliveries/${encodeURIComponent(d.id)}/resend`)) },
                'Send again',
              ),
          },
        ],
        deliveries,
        { empty: 'No delivery matches.', testid: 'deliveries' },
      ),
      next ? h('p', {}, h('button', { type: 'button', onclick: () => ctx.go('webhooks', { ...current, before: next }) }, 'Older deliveries')) : null,
    ),
  );
};

import { h, section, stat, table, when } from './dom.js';
import { copyButton, shortId, tokenLabel } from './ids.js';
import type { Page, PageContext } from './page.js';
import { archiveSection, type TaskArchive } from './task-archive.js';

const STATUSES = ['submitting', 'queued', 'in_progress', 'completed', 'failed'] as const;
const FILTERS = ['status', 'model', 'channel', 'token'] as const;

interface TaskView {
  id: string;
  token_id: string;
  /** Null once the token is deleted. */
  token_name: string | null;
  kind: string;
  route: string;
  model: string;
  channel: string;
  status: string;
  progress: number;
  vendor_status: string | null;
  price: number;
  charged: number | null;
  refunded: boolean;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  error: { code: string; message: string } | null;
}
interface TaskDetail extends TaskView {
  seconds: string | null;
  size: string | null;
  deadline_at: number;
  results: number;
}
type TimelineEvent = {
  at: number;
  event: string;
  status?: string;
  vendor_status?: string | null;
  progress?: number;
  charged?: number | null;
  amount?: number;
  error?: TaskView['error'];
};

const badge = (status: string) => h('span', { class: `badge ${status}` }, status.replace('_', ' '));
const money = (t: TaskView) => (t.refunded ? `${t.price} refunded` : t.charged === null ? `${t.price} held` : `${t.charged} of ${t.price}`);

/** What one moment of the timeline says, in words. */
function describe(e: TimelineEvent): string {
  switch (e.event) {
    case 'submitted':
      return 'submitted to the vendor';
    case 'vendor_state':
      return `seen ${String(e.status).replace('_', ' ')}${e.vendor_status ? ` (vendor: ${e.vendor_status})` : ''}, ${e.progress ?? 0} %`;
    case 'completed':
      return `completed${e.vendor_status ? ` (vendor: ${e.vendor_status})` : ''}, charged ${e.charged ?? '—'}`;
    case 'failed':
      return `failed${e.error ? `: ${e.error.code}, ${e.error.message}` : ''}`;
    case 'debit':
      return `${e.amount} units held from the token`;
    case 'settle':
      return `settled: ${e.amount} units given back`;
    case 'refund':
      return `refunded: ${e.amount} units given back`;
    default:
      return e.event;
  }
}

async function oneTask({ api, go }: PageContext, id: string): Promise<Node> {
  const {
    task: t,
    timeline,
    archive,
  } = await api.get<{ task: TaskDetail; timeline: TimelineEvent[]; archive?: TaskArchive }>(`/admin/tasks/${encodeURIComponent(id)}`);
  return h(
    'div',
    {},
    h('p', {}, h('a', { href: '#tasks', onclick: (e: Event) => (e.preventDefault(), go('tasks')) }, '← every task')),
    section(
      'Task',
      h('p', { class: 'id-cell' }, h('code', { 'data-testid': 'task-id' }, t.id), copyButton(t.id)),
      h(
        'div',
        { class: 'stats', 'data-testid': 'task' },
        stat('status', badge(t.status)),
        stat('model', t.model),
        stat('channel', t.channel),
        stat('token', tokenLabel(t.token_id, t.token_name, `#tokens?token=${encodeURIComponent(t.token_id)}`)),
        stat('route', t.route),
        stat('progress', `${t.progress} %`),
        stat('vendor status', t.vendor_status ?? '—'),
        stat('units', money(t)),
        stat('results', t.results),
        t.seconds ? stat('seconds', t.seconds) : null,
        t.size ? stat('size', t.size) : null,
        stat('created', when(t.created_at)),
        stat('deadline', when(t.deadline_at)),
      ),
      t.error ? h('p', { class: 'notice error' }, `${t.error.code}: ${t.error.message}`) : null,
      h('p', {}, h('a', { href: `#requests?task=${encodeURIComponent(t.id)}`, 'data-testid': 'task-requests' }, 'Its requests (submission and queries) →')),
    ),
    section(
      'Timeline',
      h(
        'ol',
        { class: 'timeline', 'data-testid': 'timeline' },
        timeline.map((e) => h('li', { 'data-event': e.event }, h('strong', {}, when(e.at)), ' ', describe(e))),
      ),
    ),
    archiveSection(archive),
  );
}

export const tasksPage: Page = async (ctx) => {
  const { api, params, go } = ctx;
  const id = params.get('id');
  if (id) return oneTask(ctx, id);
  const query = new URLSearchParams();
  for (const f of [...FILTERS, 'before'] as const) {
    const value = params.get(f);
    if (value) query.set(f, value);
  }
  const { tasks, next } = await api.get<{ tasks: TaskView[]; next: string | null }>(`/admin/tasks?${query}`);

  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: '' }, 'any'),
    STATUSES.map((s) => h('option', { value: s, selected: params.get('status') === s }, s.replace('_', ' '))),
  );
  const inputs = {
    model: h('input', { name: 'model', value: params.get('model') ?? '' }),
    channel: h('input', { name: 'channel', value: params.get('channel') ?? '' }),
    token: h('input', { name: 'token', value: params.get('token') ?? '' }),
  };
  const filters = (): Record<string, string> => {
    const out: Record<string, string> = {};
    if (status.value) out.status = status.value;
    for (const k of ['model', 'channel', 'token'] as const) if (inputs[k].value.trim()) out[k] = inputs[k].value.trim();
    return out;
  };
  const form = h(
    'form',
    { class: 'inline', onsubmit: (e: Event) => (e.preventDefault(), go('tasks', filters())) },
    h('label', {}, 'status ', status),
    h('label', {}, 'model ', inputs.model),
    h('label', {}, 'channel ', inputs.channel),
    h('label', {}, 'token ', inputs.token),
    h('button', { type: 'submit' }, 'Filter'),
  );
  const current = Object.fromEntries(
    [...FILTERS].flatMap((f) => {
      const value = params.get(f);
      return value ? [[f, value] as const] : [];
    }),
  );
  return h(
    'div',
    {},
    section('Filter', form),
    section(
      'Tasks, newest first',
      table<TaskView>(
        [
          { label: 'created', cell: (t) => when(t.created_at) },
          { label: 'task', cell: (t) => shortId(t.id, `#tasks?id=${encodeURIComponent(t.id)}`) },
          { label: 'status', cell: (t) => badge(t.status) },
          { label: 'model', cell: (t) => t.model },
          { label: 'channel', cell: (t) => t.channel },
          { label: 'token', cell: (t) => tokenLabel(t.token_id, t.token_name, `#tokens?token=${encodeURIComponent(t.token_id)}`) },
          { label: 'progress', cell: (t) => `${t.progress} %`, numeric: true },
          { label: 'vendor status', cell: (t) => t.vendor_status ?? '—' },
          { label: 'units', cell: money, numeric: true },
        ],
        tasks,
        { empty: 'No task matches.', testid: 'tasks' },
      ),
      next ? h('p', {}, h('button', { type: 'button', onclick: () => go('tasks', { ...current, before: next }) }, 'Older tasks')) : null,
    ),
  );
};

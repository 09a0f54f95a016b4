import { ApiError } from './api.js';
import { h, section, stat, table } from './dom.js';
import type { Page, PageContext } from './page.js';

interface Answer {
  route: { id: string; method: string; path: string; kind: string; operation: string };
  family: { name: string; description?: string; mode: string | null; mode_from?: string; limits?: unknown; model_limits?: unknown } | null;
  group: { name: string; max_concurrency: number | null; inflight: number };
  checks: {
    outcome: 'ok' | 'refused';
    applied: { check: string; what: string; ok: boolean }[];
    warning: string | null;
    error: { status: number; body: unknown; detail?: string } | null;
  };
  channels: {
    name: string;
    profile: string;
    priority?: number;
    weight?: number;
    share?: number;
    upstream_model?: string;
    passed_over: string | null;
    retry_at?: string;
    reason?: string;
  }[];
  chosen: string | null;
  upstream: { method: string; url: string; headers: Record<string, string>; body: unknown; signed: boolean }[];
  price: { units: number; per_second: boolean } | null;
}

/** What the operator typed last, kept while the tab is open so a redraw does not lose it. */
const typed = {
  model: 'alpha-3-pro-image-preview',
  group: 'default',
  route: 'alpha-generate-content',
  body: JSON.stringify(
    {
      contents: [{ role: 'user', parts: [{ text: 'a red bicycle' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
    },
    null,
    2,
  ),
};

const pretty = (v: unknown) => h('pre', {}, typeof v === 'string' ? v : JSON.stringify(v, null, 2));

function result(a: Answer): HTMLElement {
  return h(
    'div',
    { 'data-testid': 'playground-result' },
    section(
      'Route and family',
      h(
        'div',
        { class: 'stats' },
        stat('route', h('code', {}, a.route.id)),
        stat('request', `${a.route.method} ${a.route.path}`),
        stat('kind', a.route.kind),
        stat('operation', a.route.operation),
        stat('family', a.family?.name ?? '—'),
        stat('mode', a.family?.mode ?? '—'),
        stat('group', `${a.group.name} (${a.group.inflight} / ${a.group.max_concurrency ?? '∞'} in flight)`),
        stat('price', a.price ? `${a.price.units} units${a.price.per_second ? ' (per second)' : ''}` : '—'),
      ),
      a.family?.limits
        ? h('details', {}, h('summary', {}, 'limits the family checks'), pretty({ limits: a.family.limits, model_limits: a.family.model_limits }))
        : null,
    ),
    section(
      'Checks',
      h(
        'p',
        {},
        h(
          'span',
          { class: `badge ${a.checks.outcome === 'ok' ? 'ok' : 'error'}`, 'data-testid': 'outcome' },
          a.checks.outcome === 'ok' ? 'the gateway would send it' : 'the gateway would refuse it',
        ),
      ),
      h(
        'ul',
        { class: 'issues' },
        a.checks.applied.map((c) => h('li', {}, c.ok ? '✓ ' : '✗ ', h('strong', {}, c.check), `: ${c.what}`)),
      ),
      a.checks.warning ? h('p', { class: 'notice' }, `Warning: ${a.checks.warning}`) : null,
      a.checks.error
        ? h(
            'div',
            { 'data-testid': 'client-error' },
            h('p', {}, `The client would get HTTP ${a.checks.error.status}:`),
            pretty(a.checks.error.body),
            a.checks.error.detail ? h('p', {}, a.checks.error.detail) : null,
          )
        : null,
    ),
    section(
      'Channels, in the order the router tries them',
      table<Answer['channels'][number]>(
        [
          { label: 'channel', cell: (c) => (c.name === a.chosen ? h('strong', { 'data-testid': 'chosen' }, `${c.name} ← chosen`) : c.name) },
          { label: 'profile', cell: (c) => c.profile },
          { label: 'priority', cell: (c) => c.priority ?? '—', numeric: true },
          { label: 'weight', cell: (c) => c.weight ?? '—', numeric: true },
          { label: 'first in tier', cell: (c) => (c.share === undefined ? '—' : `${Math.round(c.share * 100)} %`), numeric: true },
          { label: 'upstream model', cell: (c) => c.upstream_model ?? '—' },
          { label: 'passed over', cell: (c) => (c.passed_over ? `${c.passed_over.replace(/_/g, ' ')}${c.reason ? ` (${c.reason})` : ''}` : '—') },
        ],
        a.channels,
      ),
    ),
    section(
      'Upstream request',
      a.upstream.length === 0
        ? h('p', { class: 'empty' }, 'None: the gateway would not call a vendor.')
        : a.upstream.map((u) =>
            h(
              'div',
              { 'data-testid': 'upstream' },
              h('p', {}, h('code', {}, `${u.method} ${u.url}`), u.signed ? ' (signed; secrets shown as ***)' : ''),
              table(
                [
                  { label: 'header', cell: ([k]: [string, string]) => h('code', {}, k) },
                  { label: 'value', cell: ([, v]: [string, string]) => h('code', {}, v) },
                ],
                Object.entries(u.headers),
              ),
              pretty(u.body),
            ),
          ),
    ),
  );
}

export const playgroundPage: Page = async ({ api }: PageContext) => {
  const channels = await api.get<{ channels: { models: string[] }[]; groups: { name: string }[] }>('/admin/channels');
  const models = [...new Set(channels.channels.flatMap((c) => c.models).filter((m) => !m.endsWith('*')))].sort();
  const model = h('input', { name: 'model', list: 'playground-models', value: typed.model, required: true });
  const group = h(
    'select',
    { name: 'group' },
    channels.groups.map((g) => h('option', { value: g.name, selected: g.name === typed.group }, g.name)),
  );
  const route = h('input', { name: 'route', placeholder: 'only when several routes serve the model', value: typed.route });
  // A route named for one model rarely serves the next: the gateway says which ones do, if asked.
  model.addEventListener('change', () => (route.value = ''));
  const body = h('textarea', { name: 'body', spellcheck: 'false', 'aria-label': 'client body' });
  body.value = typed.body;
  const out = h('div', {});
  const form = h(
    'form',
    {
      onsubmit: async (e: Event) => {
        e.preventDefault();
        Object.assign(typed, { model: model.value.trim(), group: group.value, route: route.value.trim(), body: body.value });
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.value);
        } catch (err) {
          out.replaceChildren(h('p', { class: 'notice error', 'data-testid': 'playground-error' }, `The body is not JSON: ${(err as Error).message}`));
          return;
        }
        try {
          const a = await api.post<Answer>('/admin/playground', {
            model: typed.model,
            group: typed.group,
            ...(typed.route ? { route: typed.route } : {}),
            body: parsed,
          });
          out.replaceChildren(result(a));
        } catch (err) {
          out.replaceChildren(h('p', { class: 'notice error', 'data-testid': 'playground-error' }, err instanceof ApiError ? err.message : String(err)));
        }
      },
    },
    h('div', { class: 'inline' }, h('label', {}, 'model ', model), h('label', {}, 'group ', group), h('label', {}, 'route ', route)),
    h(
      'datalist',
      { id: 'playground-models' },
      models.map((m) => h('option', { value: m })),
    ),
    h('p', {}, 'The client body, as it would be posted:'),
    body,
    h('p', {}, h('button', { type: 'submit' }, 'Show what the gateway would send')),
  );
  return h(
    'div',
    {},
    section('A client request', h('p', { class: 'empty' }, 'Nothing is sent to any vendor, nothing is written, no quota is counted.'), form),
    out,
  );
};

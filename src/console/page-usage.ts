import { barChart } from './chart.js';
import { h, section, stat, table } from './dom.js';
import { tokenLabel } from './ids.js';
import type { Page } from './page.js';

interface Figures {
  requests: number;
  charged: number;
  refunded: number;
  settled: number;
}
interface Usage {
  from: number;
  to: number;
  totals: Figures;
  by_token: (Figures & { token_id: string; name: string | null })[];
  by_model: (Figures & { model: string })[];
  by_day: (Figures & { day: string })[];
}

const FILTERS = ['from', 'to', 'token', 'model'] as const;
const figureColumns = <T extends Figures>() => [
  { label: 'requests', cell: (r: T) => r.requests, numeric: true },
  { label: 'charged', cell: (r: T) => r.charged, numeric: true },
  { label: 'refunded', cell: (r: T) => r.refunded, numeric: true },
  { label: 'settled back', cell: (r: T) => r.settled, numeric: true },
];
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const usagePage: Page = async ({ api, params, go }) => {
  const query = new URLSearchParams();
  for (const f of FILTERS) {
    const value = params.get(f);
    if (value) query.set(f, value);
  }
  const u = await api.get<Usage>(`/admin/usage?${query}`);

  const inputs = {
    from: h('input', { name: 'from', type: 'date', value: params.get('from') ?? day(u.from) }),
    to: h('input', { name: 'to', type: 'date', value: params.get('to') ?? day(u.to + 86_399_999) }),
    token: h('input', { name: 'token', placeholder: 'every token', value: params.get('token') ?? '' }),
    model: h('input', { name: 'model', placeholder: 'every model', value: params.get('model') ?? '' }),
  };
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const next: Record<string, string> = {};
        for (const f of FILTERS) if (inputs[f].value.trim()) next[f] = inputs[f].value.trim();
        go('usage', next);
      },
    },
    h('label', {}, 'from ', inputs.from),
    h('label', {}, 'to (not included) ', inputs.to),
    h('label', {}, 'token ', inputs.token),
    h('label', {}, 'model ', inputs.model),
    h('button', { type: 'submit' }, 'Show'),
  );
  const csv = h(
    'button',
    {
      type: 'button',
      onclick: async () => {
        // The CSV route wants the key like any other: fetched here, handed to the browser as a file.
        const blob = await api.blob(`/admin/usage.csv?${query}`);
        const a = h('a', { href: URL.createObjectURL(blob), download: `usage-${day(u.from)}-${day(u.to)}.csv` });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
      },
    },
    'Export CSV',
  );
  return h(
    'div',
    {},
    section('Range', form, h('p', {}, csv)),
    section(
      'Totals',
      h(
        'div',
        { class: 'stats', 'data-testid': 'totals' },
        stat('charged', u.totals.charged),
        stat('requests', u.totals.requests),
        stat('refunded', u.totals.refunded),
        stat('settled back', u.totals.settled),
      ),
      barChart(
        u.by_day.map((d) => ({ label: d.day.slice(5), value: d.charged })),
        { title: 'units charged by day', testid: 'by-day-chart' },
      ),
    ),
    h(
      'div',
      { class: 'grid2' },
      section(
        'By token',
        barChart(
          u.by_token.slice(0, 12).map((t) => ({ label: t.name ?? t.token_id.slice(0, 8), value: t.charged })),
          { title: 'units charged by token (the 12 largest)', testid: 'by-token-chart', width: 450 },
        ),
        table(
          [
            { label: 'token', cell: (r: Usage['by_token'][number]) => tokenLabel(r.token_id, r.name, `#tokens?token=${encodeURIComponent(r.token_id)}`) },
            ...figureColumns<Usage['by_token'][number]>(),
          ],
          u.by_token,
          { empty: 'No spend in this range.', testid: 'by-token' },
        ),
      ),
      section(
        'By model',
        barChart(
          u.by_model.slice(0, 12).map((m) => ({ label: m.model, value: m.charged })),
          { title: 'units charged by model (the 12 largest)', testid: 'by-model-chart', width: 450 },
        ),
        table([{ label: 'model', cell: (r: Usage['by_model'][number]) => r.model }, ...figureColumns<Usage['by_model'][number]>()], u.by_model, {
          empty: 'No spend in this range.',
          testid: 'by-model',
        }),
      ),
    ),
    section(
      'By day',
      table(
        [{ label: 'day (UTC)', cell: (r: Usage['by_day'][number]) => r.day }, ...figureColumns<Usage['by_day'][number]>()],
        u.by_day.filter((d) => d.requests || d.charged || d.refunded || d.settled),
        { empty: 'No spend in this range.', testid: 'by-day' },
      ),
    ),
  );
};

import { h, section, table, when } from './dom.js';
import type { Page } from './page.js';

interface ChannelView {
  name: string;
  profile: string;
  origin: string;
  groups: string[];
  models: string[];
  priority: number;
  weight: number;
  max_concurrency: number | null;
  inflight: number;
  /** Requests in the line of a full max_concurrency (docs/routing.md, "Saturation"). */
  waiting: number;
  calls: number;
  failures: number;
  recent: { window_s: number; calls: number; failures: number };
  last_failure: { at: string; code: string; message: string } | null;
  breaker: { state: string; consecutive_failures: number; opened_at: string | null; probe_at: string | null };
}
interface LeftOut {
  name: string;
  profile: string;
  reason: string;
  unset: { name: string }[] | string[];
  at: string;
}
interface ChannelsReport {
  channels: ChannelView[];
  left_out: LeftOut[];
}
/** One group of GET /admin/groups. */
interface GroupView {
  name: string;
  declared: boolean;
  limits: { rpm: number | null; max_parallel: number | null } | null;
  max_concurrency: number | null;
  channels: string[];
  tokens: { total: number; active: number };
  inflight: number;
  waiting: number;
}

const rate = (r: ChannelView['recent']) => (r.calls === 0 ? '—' : `${((100 * r.failures) / r.calls).toFixed(1)} % of ${r.calls}`);
const models = (m: string[]) => (m.length <= 4 ? m.join(', ') : `${m.slice(0, 4).join(', ')} and ${m.length - 4} more`);
/** A group's shared rate limits as one cell: `60 / min, 5 at once`, or a dash for none. */
const groupLimits = (l: GroupView['limits']) =>
  l === null
    ? '—'
    : [l.rpm === null ? null : `${l.rpm} / min`, l.max_parallel === null ? null : `${l.max_parallel} at once`].filter((x) => x !== null).join(', ');
const unsetNames = (u: LeftOut['unset']) => u.map((x) => (typeof x === 'string' ? x : x.name)).join(', ');

export const channelsPage: Page = async ({ api }) => {
  const [r, { groups }] = await Promise.all([api.get<ChannelsReport>('/admin/channels'), api.get<{ groups: GroupView[] }>('/admin/groups')]);
  return h(
    'div',
    {},
    section(
      'Channels',
      table<ChannelView>(
        [
          { label: 'channel', cell: (c) => h('strong', {}, c.name) },
          { label: 'profile', cell: (c) => c.profile },
          { label: 'models', cell: (c) => h('span', { title: c.models.join(', ') }, models(c.models)) },
          { label: 'priority', cell: (c) => c.priority, numeric: true },
          { label: 'weight', cell: (c) => c.weight, numeric: true },
          { label: 'breaker', cell: (c) => h('span', { class: `badge ${c.breaker.state}` }, c.breaker.state.replace('_', ' ')) },
          { label: 'in flight', cell: (c) => `${c.inflight} / ${c.max_concurrency ?? '∞'}`, numeric: true },
          { label: 'waiting', cell: (c) => (c.max_concurrency === null ? '—' : c.waiting), numeric: true },
          { label: 'errors (5 min)', cell: (c) => rate(c.recent), numeric: true },
          {
            label: 'last failure',
            cell: (c) => (c.last_failure ? h('span', { title: c.last_failure.message }, `${c.last_failure.code}, ${when(c.last_failure.at)}`) : '—'),
          },
        ],
        r.channels,
        { empty: 'No channel serves: every one is left out (below).', testid: 'channels' },
      ),
    ),
    section(
      'Left out',
      table<LeftOut>(
        [
          { label: 'channel', cell: (c) => c.name },
          { label: 'profile', cell: (c) => c.profile },
          { label: 'why', cell: (c) => (c.reason === 'unset_env' ? `unset: ${unsetNames(c.unset)}` : c.reason) },
          { label: 'declared at', cell: (c) => h('code', {}, c.at) },
        ],
        r.left_out,
        { empty: 'Every declared channel serves.', testid: 'left-out' },
      ),
    ),
    section(
      'Groups',
      table<GroupView>(
        [
          {
            label: 'group',
            cell: (g) => (g.declared ? g.name : h('span', { title: 'tokens name it; channels.yaml does not declare it' }, `${g.name} (undeclared)`)),
          },
          { label: 'rate limits (shared)', cell: (g) => groupLimits(g.limits) },
          { label: 'in flight', cell: (g) => `${g.inflight} / ${g.max_concurrency ?? '∞'}`, numeric: true },
          { label: 'waiting', cell: (g) => (g.max_concurrency === null ? '—' : g.waiting), numeric: true },
          { label: 'channels', cell: (g) => g.channels.length, numeric: true },
          { label: 'tokens (active)', cell: (g) => `${g.tokens.total} (${g.tokens.active})`, numeric: true },
        ],
        groups,
        { testid: 'groups' },
      ),
    ),
  );
};

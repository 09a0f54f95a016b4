/**
 * The Tokens page: a form that makes a token with every setting it can have, the list of tokens
 * with what each has left and when it was last used, and one token's panel (`#tokens?token=<id>`,
 * ./token-manage.ts) to change it, rotate its key or delete it.
 */
import { ApiError } from './api.js';
import { h, section, table, when } from './dom.js';
import type { Page, PageContext } from './page.js';
import { act, type ShownKey, tokenPanel } from './token-manage.js';
import {
  addressesValue,
  budgetText,
  expiryInput,
  expiryValue,
  limitsText,
  numberInput,
  numberValue,
  periodInput,
  quotaText,
  stateBadge,
  type Token,
} from './token-view.js';

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

function createForm(ctx: PageContext, groups: string[], notice: HTMLElement): HTMLElement {
  const name = h('input', { name: 'name', placeholder: 'acme-production', maxlength: 100 });
  const group = h(
    'select',
    { name: 'group' },
    groups.map((g) => h('option', { value: g }, g)),
  );
  const quota = h('input', { name: 'quota', type: 'number', min: 0, step: 1, placeholder: 'unlimited' });
  const budget = numberInput('budget', 'budget');
  const [period, periods] = periodInput('budget period');
  const models = h('input', { name: 'models', placeholder: 'every model of the group' });
  const rpm = numberInput('rpm_limit', 'requests per minute');
  const parallel = numberInput('max_parallel', 'requests in flight');
  const expires = expiryInput('expires at');
  const addresses = h('input', { name: 'allowed_ips', placeholder: 'anywhere', 'aria-label': 'allowed addresses', class: 'wide' });
  return h(
    'form',
    {
      class: 'inline',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const list = models.value
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
        const spend = numberValue(budget);
        const body = {
          group: group.value,
          name: name.value.trim() || undefined,
          quota: quota.value === '' ? null : Number(quota.value),
          budget: spend,
          budget_period: spend === null ? null : period.value.trim(),
          models: list.length ? list : null,
          rpm_limit: numberValue(rpm),
          max_parallel: numberValue(parallel),
          expires_at: expiryValue(expires),
          allowed_ips: addressesValue(addresses),
        };
        try {
          const r = await ctx.api.post<{ key: string; token: Token }>('/admin/tokens', body);
          shown = { text: `Token ${r.token.name} created. Its key, shown this once:`, key: r.key };
          ctx.refresh();
        } catch (err) {
          notice.textContent = message(err);
          notice.className = 'notice error';
        }
      },
    },
    h('label', {}, 'name ', name),
    h('label', {}, 'group ', group),
    h('label', {}, 'models ', models),
    h('label', {}, 'quota ', quota),
    h('label', {}, 'budget ', budget),
    h('label', {}, 'per ', period, periods),
    h('label', {}, 'per minute ', rpm),
    h('label', {}, 'in flight ', parallel),
    h('label', {}, 'expires ', expires),
    h('label', {}, 'from ', addresses),
    h('button', { type: 'submit' }, 'Create token'),
  );
}

/**
 * The key just made (a new token's or a rotated one's), for the drawing that follows, and then
 * forgotten: the gateway keeps only its hash, and the console shows it this once (never in the
 * address or in storage).
 */
let shown: ShownKey | null = null;

export const tokensPage: Page = async (ctx) => {
  const [{ tokens }, channels] = await Promise.all([
    ctx.api.get<{ tokens: Token[] }>('/admin/tokens'),
    ctx.api.get<{ groups: { name: string }[] }>('/admin/channels'),
  ]);
  const notice = h('p', { class: 'notice', 'data-testid': 'notice' });
  const key = shown && h('div', { class: 'notice key', 'data-testid': 'new-key' }, h('p', {}, shown.text), h('code', { 'data-testid': 'key' }, shown.key));
  shown = null;
  const selected = ctx.params.get('token');
  const token = selected ? tokens.find((t) => t.id === selected) : undefined;
  const panel = token
    ? tokenPanel(ctx, token, notice, (k) => {
        shown = k;
      })
    : selected
      ? h('p', { class: 'notice error', 'data-testid': 'page-error' }, `No token has the id ${selected}: it may have been deleted.`)
      : null;
  return h(
    'div',
    {},
    key,
    notice,
    panel,
    section(
      'Tokens',
      table<Token>(
        [
          { label: 'name', cell: (t) => h('a', { href: `#tokens?token=${encodeURIComponent(t.id)}`, 'data-action': 'manage' }, t.name) },
          { label: 'group', cell: (t) => t.group },
          { label: 'models', cell: (t) => (t.models === null ? 'all of the group' : t.models.join(', ')) },
          { label: 'quota', cell: quotaText },
          { label: 'budget', cell: budgetText },
          { label: 'rate limits', cell: limitsText },
          { label: 'expires', cell: (t) => (t.expires_at ? when(t.expires_at) : 'never') },
          { label: 'from', cell: (t) => (t.allowed_ips === null ? 'anywhere' : t.allowed_ips.join(', ')) },
          { label: 'last used', cell: (t) => (t.last_used_at ? when(t.last_used_at) : 'never') },
          { label: 'state', cell: stateBadge },
          {
            label: '',
            cell: (t) =>
              h(
                'button',
                {
                  type: 'button',
                  'data-action': t.disabled ? 'enable' : 'disable',
                  onclick: () => act(ctx, notice, () => ctx.api.post(`/admin/tokens/${encodeURIComponent(t.id)}/${t.disabled ? 'enable' : 'disable'}`)),
                },
                t.disabled ? 'Enable' : 'Disable',
              ),
          },
        ],
        tokens,
        { empty: 'No token yet: create one below.', testid: 'tokens' },
      ),
    ),
    section(
      'New token',
      createForm(
        ctx,
        channels.groups.map((g) => g.name),
        notice,
      ),
    ),
  );
};

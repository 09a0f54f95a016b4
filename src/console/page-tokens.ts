import { ApiError } from './api.js';
import { h, section, table, when } from './dom.js';
import type { Page, PageContext } from './page.js';

interface Token {
  id: string;
  name: string;
  group: string;
  models: string[] | null;
  quota: number | null;
  used: number;
  disabled: boolean;
  created_at: string | number;
  rpm_limit: number | null;
  max_parallel: number | null;
  /** ISO 8601 in UTC; null: never. */
  expires_at: string | null;
}

/** A rate limit field: empty is no limit. */
const limitInput = (name: string, label: string, value: number | null = null) =>
  h('input', { name, type: 'number', min: 1, step: 1, value: value ?? '', placeholder: 'none', 'aria-label': label, class: 'narrow' });
const limitValue = (input: HTMLInputElement) => (input.value === '' ? null : Number(input.value));
/** An expiry field: an ISO 8601 time with a zone, as the admin API takes it (it says what is wrong); empty is never. */
const expiryInput = (label: string, value: string | null = null) =>
  h('input', { name: 'expires_at', value: value ?? '', placeholder: 'never (or 2027-01-31T00:00:00Z)', 'aria-label': label, class: 'wide' });
const expiryValue = (input: HTMLInputElement) => (input.value.trim() === '' ? null : input.value.trim());
const hasExpired = (t: Token) => t.expires_at !== null && Date.parse(t.expires_at) <= Date.now();

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** Runs an action of a row; its failure is said in the page's notice, and the page is drawn again on success. */
async function act(ctx: PageContext, notice: HTMLElement, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    ctx.refresh();
  } catch (e) {
    notice.textContent = message(e);
    notice.className = 'notice error';
  }
}

function createForm(ctx: PageContext, groups: string[], notice: HTMLElement): HTMLElement {
  const name = h('input', { name: 'name', placeholder: 'admin', maxlength: 100 });
  const group = h(
    'select',
    { name: 'group' },
    groups.map((g) => h('option', { value: g }, g)),
  );
  const quota = h('input', { name: 'quota', type: 'number', min: 0, step: 1, placeholder: 'unlimited' });
  const models = h('input', { name: 'models', placeholder: 'every model of the group' });
  const rpm = limitInput('rpm_limit', 'requests per minute');
  const parallel = limitInput('max_parallel', 'requests in flight');
  const expires = expiryInput('expires at');
  const form = h(
    'form',
    {
      class: 'inline',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const list = models.value
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
        const body = {
          group: group.value,
          name: name.value.trim() || undefined,
          quota: quota.value === '' ? null : Number(quota.value),
          models: list.length ? list : null,
          rpm_limit: limitValue(rpm),
          max_parallel: limitValue(parallel),
          expires_at: expiryValue(expires),
        };
        try {
          const r = await ctx.api.post<{ key: string; token: Token }>('/admin/tokens', body);
          justCreated = { id: r.token.id, key: r.key };
          ctx.refresh();
        } catch (err) {
          notice.textContent = message(err);
          notice.className = 'notice error';
        }
      },
    },
    h('label', {}, 'name ', name),
    h('label', {}, 'group ', group),
    h('label', {}, 'quota ', quota),
    h('label', {}, 'models ', models),
    h('label', {}, 'per minute ', rpm),
    h('label', {}, 'in flight ', parallel),
    h('label', {}, 'expires ', expires),
    h('button', { type: 'submit' }, 'Create token'),
  );
  return form;
}

/**
 * The key of the token just created, for the redraw that lists it, and then forgotten: the gateway
 * keeps only its hash, and the console shows it this once (never in the address or in storage).
 */
let justCreated: { id: string; key: string } | null = null;

export const tokensPage: Page = async (ctx) => {
  const [{ tokens }, channels] = await Promise.all([
    ctx.api.get<{ tokens: Token[] }>('/admin/tokens'),
    ctx.api.get<{ groups: { name: string }[] }>('/admin/channels'),
  ]);
  const notice = h('p', { class: 'notice', 'data-testid': 'notice' });
  const form = createForm(
    ctx,
    channels.groups.map((g) => g.name),
    notice,
  );
  const created =
    justCreated &&
    h(
      'div',
      { class: 'notice key', 'data-testid': 'new-key' },
      h('p', {}, `Token ${justCreated.id} created. Its key, shown this once:`),
      h('code', { 'data-testid': 'key' }, justCreated.key),
    );
  justCreated = null;
  const quotaCell = (t: Token) => {
    const input = h('input', {
      type: 'number',
      min: 0,
      step: 1,
      value: t.quota ?? '',
      placeholder: 'unlimited',
      'aria-label': `quota of ${t.id}`,
      class: 'narrow',
    });
    const set = h(
      'button',
      {
        type: 'button',
        onclick: () =>
          act(ctx, notice, () => ctx.api.post(`/admin/tokens/${encodeURIComponent(t.id)}/quota`, { quota: input.value === '' ? null : Number(input.value) })),
      },
      'Set',
    );
    return h('span', { class: 'quota' }, input, set);
  };
  // The key's rate limits (docs/tokens-and-quota.md, "Rate limits"): both sent, an empty one removes that limit.
  const limitsCell = (t: Token) => {
    const rpm = limitInput('rpm_limit', `requests per minute of ${t.id}`, t.rpm_limit);
    const parallel = limitInput('max_parallel', `requests in flight of ${t.id}`, t.max_parallel);
    const apply = h(
      'button',
      {
        type: 'button',
        onclick: () =>
          act(ctx, notice, () =>
            ctx.api.post(`/admin/tokens/${encodeURIComponent(t.id)}/limits`, { rpm_limit: limitValue(rpm), max_parallel: limitValue(parallel) }),
          ),
      },
      'Apply',
    );
    return h('span', { class: 'quota' }, rpm, ' /min ', parallel, ' at once ', apply);
  };
  // When the key stops working (docs/tokens-and-quota.md, "Expiry"): a past time ends it now, empty is never.
  const expiryCell = (t: Token) => {
    const input = expiryInput(`expiry of ${t.id}`, t.expires_at);
    const set = h(
      'button',
      {
        type: 'button',
        onclick: () => act(ctx, notice, () => ctx.api.post(`/admin/tokens/${encodeURIComponent(t.id)}/expiry`, { expires_at: expiryValue(input) })),
      },
      'Set expiry',
    );
    return h('span', { class: 'quota' }, input, set);
  };
  const state = (t: Token) => (t.disabled ? 'disabled' : hasExpired(t) ? 'expired' : 'enabled');
  return h(
    'div',
    {},
    section('New token', form, created, notice),
    section(
      'Tokens',
      table<Token>(
        [
          { label: 'id', cell: (t) => h('code', {}, t.id) },
          { label: 'name', cell: (t) => t.name },
          { label: 'group', cell: (t) => t.group },
          { label: 'models', cell: (t) => (t.models === null ? 'all of the group' : t.models.join(', ')) },
          { label: 'used', cell: (t) => t.used, numeric: true },
          { label: 'quota', cell: quotaCell },
          { label: 'rate limits', cell: limitsCell },
          { label: 'expires', cell: expiryCell },
          { label: 'state', cell: (t) => h('span', { class: `badge ${state(t) === 'enabled' ? 'closed' : 'open'}`, 'data-state': state(t) }, state(t)) },
          { label: 'created', cell: (t) => when(t.created_at) },
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
        { empty: 'No token yet: create one above.', testid: 'tokens' },
      ),
    ),
  );
};

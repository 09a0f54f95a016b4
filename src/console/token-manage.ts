/**
 * One token's panel on the Tokens page (`#tokens?token=<id>`): every change the admin API allows of
 * a token, each a small form calling one admin route (docs/tokens-and-quota.md): name, quota,
 * budget, rate limits, expiry, allowed addresses, rotation, disable or enable, and deletion.
 */
import { ApiError } from './api.js';
import { h, section, stat, when } from './dom.js';
import { copyButton } from './ids.js';
import type { PageContext } from './page.js';
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

/** A key the page shows once on its next drawing (a new token's, or a rotated one's), then forgets. */
export interface ShownKey {
  readonly text: string;
  readonly key: string;
}

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** Runs an action; its failure is said in the notice, and the page is drawn again on success. */
export async function act(ctx: PageContext, notice: HTMLElement, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
    ctx.refresh();
  } catch (e) {
    notice.textContent = message(e);
    notice.className = 'notice error';
  }
}

/** Grace periods offered when rotating: the old key stops at once, or works on for a while. */
const GRACES: readonly [string, number][] = [
  ['none: the old key stops now', 0],
  ['1 hour', 3600],
  ['24 hours', 86_400],
  ['7 days', 7 * 86_400],
];

/** Until when the key a rotation replaced still works; null when it does not (never rotated, or its grace is over). */
const previousKeyUntil = (t: Token) =>
  t.previous_key_expires_at !== null && Date.parse(t.previous_key_expires_at) > Date.now() ? t.previous_key_expires_at : null;

/** A form of one labelled row ending in its button. */
const row = (label: string, run: () => void, button: string, ...fields: (Node | string)[]) =>
  h(
    'form',
    { class: 'inline', 'aria-label': label, onsubmit: (e: Event) => (e.preventDefault(), run()) },
    h('span', { class: 'form-label' }, label),
    ...fields,
    h('button', { type: 'submit' }, button),
  );

export function tokenPanel(ctx: PageContext, t: Token, notice: HTMLElement, showKey: (k: ShownKey) => void): HTMLElement {
  const path = `/admin/tokens/${encodeURIComponent(t.id)}`;
  const post = (suffix: string, body?: unknown) => act(ctx, notice, () => ctx.api.post(`${path}/${suffix}`, body));

  const name = h('input', { name: 'name', value: t.name, maxlength: 100, 'aria-label': `name of ${t.id}`, class: 'wide' });
  const quota = h('input', {
    name: 'quota',
    type: 'number',
    min: 0,
    step: 1,
    value: t.quota ?? '',
    placeholder: 'unlimited',
    'aria-label': `quota of ${t.id}`,
    class: 'narrow',
  });
  const budget = numberInput('budget', `budget of ${t.id}`, t.budget);
  const [period, periods] = periodInput(`budget period of ${t.id}`, t.budget_period);
  const rpm = numberInput('rpm_limit', `requests per minute of ${t.id}`, t.rpm_limit);
  const parallel = numberInput('max_parallel', `requests in flight of ${t.id}`, t.max_parallel);
  const expiry = expiryInput(`expiry of ${t.id}`, t.expires_at);
  const addresses = h('input', {
    name: 'allowed_ips',
    value: (t.allowed_ips ?? []).join(', '),
    placeholder: 'anywhere (or 203.0.113.0/24, 2001:db8::/32)',
    'aria-label': `allowed addresses of ${t.id}`,
    class: 'wide',
  });
  const grace = h(
    'select',
    { name: 'grace', 'aria-label': `grace of ${t.id}` },
    GRACES.map(([label, seconds]) => h('option', { value: seconds }, label)),
  );

  // Deleting takes a second click, on a button that appears only after the first.
  const confirm = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      hidden: true,
      onclick: () =>
        act(ctx, notice, async () => {
          await ctx.api.del(path);
          ctx.go('tokens');
        }),
    },
    `Delete ${t.name} for good`,
  );
  const remove = h('button', { type: 'button', class: 'danger', onclick: () => (confirm.hidden = false) }, 'Delete');

  return section(
    `Token ${t.name}`,
    h(
      'div',
      { class: 'stats', 'data-testid': 'token-summary' },
      stat('id', h('span', { class: 'id-cell' }, h('code', {}, t.id), copyButton(t.id))),
      stat('group', t.group),
      stat('state', stateBadge(t)),
      stat('quota', quotaText(t)),
      stat('budget', budgetText(t)),
      stat('rate limits', limitsText(t)),
      stat('last used', t.last_used_at ? when(t.last_used_at) : 'never'),
      stat('previous key works until', previousKeyUntil(t) ? when(previousKeyUntil(t)) : '—'),
    ),
    h(
      'div',
      { class: 'panel' },
      row('Name', () => post('name', { name: name.value.trim() }), 'Rename', name),
      row('Quota', () => post('quota', { quota: quota.value === '' ? null : Number(quota.value) }), 'Set quota', quota),
      row(
        'Budget',
        () => post('budget', { budget: numberValue(budget), budget_period: period.value.trim() || null }),
        'Set budget',
        budget,
        ' units per ',
        period,
        periods,
      ),
      row(
        'Rate limits',
        () => post('limits', { rpm_limit: numberValue(rpm), max_parallel: numberValue(parallel) }),
        'Apply',
        rpm,
        ' /min ',
        parallel,
        ' at once',
      ),
      row('Expiry', () => post('expiry', { expires_at: expiryValue(expiry) }), 'Set expiry', expiry),
      row('Allowed addresses', () => post('allowed-ips', { allowed_ips: addressesValue(addresses) }), 'Set addresses', addresses),
      row(
        'Rotate the key',
        () =>
          act(ctx, notice, async () => {
            const r = await ctx.api.post<{ key: string; token: Token }>(`${path}/rotate`, { grace_seconds: Number(grace.value) });
            const until = previousKeyUntil(r.token);
            showKey({
              text: `Token ${t.name} has a new key, shown this once; ${until ? `the old key works until ${when(until)}` : 'the old key no longer works'}:`,
              key: r.key,
            });
          }),
        'Rotate',
        grace,
      ),
      h(
        'div',
        { class: 'inline' },
        h('span', { class: 'form-label' }, 'Access'),
        h(
          'button',
          { type: 'button', 'data-action': t.disabled ? 'enable' : 'disable', onclick: () => post(t.disabled ? 'enable' : 'disable') },
          t.disabled ? 'Enable' : 'Disable',
        ),
        remove,
        confirm,
      ),
    ),
    h(
      'p',
      {},
      h('a', { href: '#tokens' }, 'Close'),
      ' · ',
      h('a', { href: `#requests?token=${encodeURIComponent(t.id)}` }, 'its requests'),
      ' · ',
      h('a', { href: `#audit?target=${encodeURIComponent(t.id)}` }, 'its changes'),
    ),
  );
}

/**
 * A token as the admin API shows it (GET /admin/tokens), and the fields and phrases the Tokens page
 * uses for it in its list and its panel.
 */
import { h, when } from './dom.js';

export interface Token {
  id: string;
  name: string;
  group: string;
  models: string[] | null;
  quota: number | null;
  quota_remaining: number | null;
  used: number;
  disabled: boolean;
  created_at: string | number;
  rpm_limit: number | null;
  max_parallel: number | null;
  /** ISO 8601 in UTC; null: never. */
  expires_at: string | null;
  budget: number | null;
  /** `day`, `week`, `month` or `<N>d`; null without a budget. */
  budget_period: string | null;
  budget_used: number | null;
  budget_remaining: number | null;
  budget_resets_at: string | null;
  last_used_at: string | null;
  /** Until when the key before the last rotation still works; null: it does not. */
  previous_key_expires_at: string | null;
  /** CIDRs the key may be used from; null: anywhere. */
  allowed_ips: string[] | null;
}

/** A whole number of units or a limit: empty is none. */
export const numberInput = (name: string, label: string, value: number | null = null) =>
  h('input', { name, type: 'number', min: 1, step: 1, value: value ?? '', placeholder: 'none', 'aria-label': label, class: 'narrow' });
export const numberValue = (input: HTMLInputElement) => (input.value === '' ? null : Number(input.value));

/** An expiry field: an ISO 8601 time with a zone, as the admin API takes it (it says what is wrong); empty is never. */
export const expiryInput = (label: string, value: string | null = null) =>
  h('input', { name: 'expires_at', value: value ?? '', placeholder: 'never (or 2027-01-31T00:00:00Z)', 'aria-label': label, class: 'wide' });
export const expiryValue = (input: HTMLInputElement) => (input.value.trim() === '' ? null : input.value.trim());

/** A budget's period: the calendar ones offered, any `<N>d` typed (the admin API says what is wrong). */
let lists = 0;
export function periodInput(label: string, value: string | null = null): [HTMLInputElement, HTMLDataListElement] {
  const id = `periods-${++lists}`;
  return [
    h('input', { name: 'budget_period', value: value ?? 'month', list: id, 'aria-label': label, class: 'narrow', placeholder: 'day, week, month, 30d' }),
    h(
      'datalist',
      { id },
      ['day', 'week', 'month', '7d', '30d'].map((p) => h('option', { value: p })),
    ),
  ];
}

/** A list of CIDRs typed with commas or spaces between them; empty is anywhere. */
export const addressesValue = (input: HTMLInputElement) => {
  const list = input.value.split(/[\s,]+/).filter(Boolean);
  return list.length ? list : null;
};

export const hasExpired = (t: Token) => t.expires_at !== null && Date.parse(t.expires_at) <= Date.now();
export const stateOf = (t: Token) => (t.disabled ? 'disabled' : hasExpired(t) ? 'expired' : 'enabled');
export const stateBadge = (t: Token) => h('span', { class: `badge ${stateOf(t) === 'enabled' ? 'closed' : 'open'}`, 'data-state': stateOf(t) }, stateOf(t));

const PERIOD_WORDS: Record<string, string> = { day: 'a day', week: 'a week', month: 'a month' };
export const periodWords = (p: string | null) => (p === null ? '' : (PERIOD_WORDS[p] ?? `every ${p.replace(/d$/, '')} days`));

/** Units spent against the lifetime quota, and what is left of it. */
export const quotaText = (t: Token) => (t.quota === null ? `${t.used} used, unlimited` : `${t.used} of ${t.quota} used, ${t.quota_remaining ?? 0} left`);

/** This period's budget: spent, left, and when it renews; '—' without one. */
export const budgetText = (t: Token) =>
  t.budget === null
    ? '—'
    : `${t.budget_used ?? 0} of ${t.budget} ${periodWords(t.budget_period)}, ${t.budget_remaining ?? 0} left, renews ${when(t.budget_resets_at)}`;

export const limitsText = (t: Token) =>
  [t.rpm_limit !== null ? `${t.rpm_limit}/min` : '', t.max_parallel !== null ? `${t.max_parallel} at once` : ''].filter(Boolean).join(', ') || 'none';

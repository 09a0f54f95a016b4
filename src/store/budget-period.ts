/**
 * The periods of a token's budget (docs/tokens-and-quota.md, "Budgets"): `day`, `week` and `month`
 * are UTC calendar periods (a week starts on Monday 00:00 UTC); `<N>d` is a run of N-day periods
 * that starts at the budget's anchor (when it was set) and renews every N days, as LiteLLM's
 * `budget_duration`. The stores compute the calendar starts from here and the N-day start in SQL
 * from the anchor, with the same arithmetic as `periodStart`.
 */

/** A budget's period, as operators write it and the store keeps it. */
export type BudgetPeriod = 'day' | 'week' | 'month' | `${number}d`;

export const DAY_MS = 86_400_000;
/** The longest N-day period: a year and a day, so a leap year fits in one. */
export const MAX_PERIOD_DAYS = 366;

/** What a period must look like, for the errors that refuse one. */
export const PERIOD_FORM = `day, week, month, or a number of days from 1 to ${MAX_PERIOD_DAYS} (7d, 30d)`;

const N_DAYS = /^([1-9][0-9]{0,2})d$/;

/** The period `raw` names; null when it is none. */
export function parseBudgetPeriod(raw: string): BudgetPeriod | null {
  if (raw === 'day' || raw === 'week' || raw === 'month') return raw;
  const m = N_DAYS.exec(raw);
  return m && Number(m[1]) <= MAX_PERIOD_DAYS ? (raw as BudgetPeriod) : null;
}

/** The days of an N-day period; null for a calendar one. */
export function periodDays(period: BudgetPeriod): number | null {
  const m = N_DAYS.exec(period);
  return m ? Number(m[1]) : null;
}

/** The starts of the UTC calendar periods `now` falls in (Unix ms): its day, its week (from Monday), its month. */
export function calendarStarts(now: number): { day: number; week: number; month: number } {
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
  const days = Math.floor(now / DAY_MS);
  const week = (days - ((((days + 3) % 7) + 7) % 7)) * DAY_MS;
  const d = new Date(now);
  const month = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { day, week, month };
}

/**
 * When the period of `now` started (Unix ms). An N-day period counts from `anchor`; a `now`
 * before the anchor (a replica's clock a little behind the one that set it) is in the first period.
 */
export function periodStart(period: BudgetPeriod, anchor: number, now: number): number {
  const n = periodDays(period);
  if (n === null) return calendarStarts(now)[period as 'day' | 'week' | 'month'];
  const len = n * DAY_MS;
  // Truncation toward zero, as integer division in SQL: the first period also holds a `now` just before the anchor.
  return anchor + Math.trunc((now - anchor) / len) * len;
}

/** When the period that started at `start` ends and the next begins (Unix ms). */
export function periodEnd(period: BudgetPeriod, start: number): number {
  const n = periodDays(period);
  if (n !== null) return start + n * DAY_MS;
  if (period === 'day') return start + DAY_MS;
  if (period === 'week') return start + 7 * DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The budget's period in words: `daily`, `weekly`, `monthly`, `7-day`. */
export function periodAdjective(period: BudgetPeriod): string {
  const n = periodDays(period);
  if (n !== null) return `${n}-day`;
  return period === 'day' ? 'daily' : period === 'week' ? 'weekly' : 'monthly';
}

/** A token's budget as the store keeps it. */
export interface BudgetState {
  readonly budget: number | null;
  readonly period: BudgetPeriod | null;
  readonly anchor: number | null;
  /** The start of the period `used` counts in; null before any spend. */
  readonly start: number | null;
  readonly used: number;
}

/** A budget as it stands at `now`: what its current period used (0 once it rolled over), what is left, when it renews. */
export interface BudgetNow {
  readonly budget: number;
  readonly period: BudgetPeriod;
  readonly start: number;
  readonly used: number;
  readonly remaining: number;
  readonly resetsAt: number;
}

/** The budget at `now`; null for a token without one. A period already counted past `now` (a clock behind another replica's) is the one shown. */
export function budgetAt(b: BudgetState, now: number): BudgetNow | null {
  if (b.budget === null || b.period === null) return null;
  const current = periodStart(b.period, b.anchor ?? now, now);
  const counted = b.start !== null && b.start >= current;
  const start = counted && b.start !== null ? b.start : current;
  const used = counted ? b.used : 0;
  return { budget: b.budget, period: b.period, start, used, remaining: Math.max(0, b.budget - used), resetsAt: periodEnd(b.period, start) };
}

/** The columns of a budget set at `now` (a new one, or a new period): anchored now, in the period of now, nothing used. */
export function newBudget(
  budget: number | null,
  period: BudgetPeriod | null,
  now: number,
): { anchor: number | null; start: number | null; days: number | null } {
  if (budget === null || period === null) return { anchor: null, start: null, days: null };
  return { anchor: now, start: periodStart(period, now, now), days: periodDays(period) };
}

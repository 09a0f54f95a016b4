/**
 * The SQL of a token's budget (docs/tokens-and-quota.md, "Budgets"), one text for both drivers: the
 * start of the period a spend falls in, the spend's rollover and check, and what a give-back takes
 * off. A spend is one UPDATE of the token's row (its quota and its budget checked and moved in the
 * same statement), so racing spends can overspend neither.
 */
import { calendarStarts, DAY_MS } from './budget-period.js';

/** Placeholders of a spend's parameters in the driver's syntax (`@amount` or `$2::bigint`). */
export interface SpendParams {
  readonly amount: string;
  readonly now: string;
  readonly day: string;
  readonly week: string;
  readonly month: string;
}

/** The calendar starts of `now`, the parameters `SpendParams` names (./budget-period.ts computes them; SQL has no month arithmetic both drivers share). */
export function spendValues(now: number): { now: number; day: number; week: number; month: number } {
  return { now, ...calendarStarts(now) };
}

/**
 * The start of the token's period at `now`: a calendar one from the parameters, an N-day one from
 * the anchor (integer division truncates toward zero, as ./budget-period.ts periodStart does).
 * `big` casts to a 64-bit integer (PostgreSQL's integer would overflow; SQLite may have bound a
 * parameter as a real, whose division would not truncate).
 */
function periodStart(p: SpendParams, c: string, big: (x: string) => string): string {
  const len = `(${big(`${c}budget_days`)} * ${DAY_MS})`;
  return `(CASE ${c}budget_period WHEN 'day' THEN ${p.day} WHEN 'week' THEN ${p.week} WHEN 'month' THEN ${p.month}
    ELSE ${c}budget_anchor + ${big(`(${p.now} - ${c}budget_anchor) / ${len}`)} * ${len} END)`;
}

/** The budget clauses of a spend's UPDATE of `tokens` (columns prefixed by `c`, e.g. `t.` or ''). */
export interface SpendSql {
  /** `, budget_used = …, budget_start = …`: the spend counted in its period, a new period starting from 0. */
  readonly sets: string;
  /** A condition: the budget (if any) has room for the amount in the period of `now`. */
  readonly allows: string;
}

/**
 * A period already counted that is later than the one of `now` (another replica's clock a little
 * ahead rolled it over) stays the current one: a spend never moves `budget_start` back.
 */
export function spendSql(p: SpendParams, c: string, big: (x: string) => string): SpendSql {
  const start = periodStart(p, c, big);
  const counted = `${c}budget_start >= ${start}`;
  return {
    sets: `, budget_used = CASE WHEN ${c}budget IS NULL THEN ${c}budget_used WHEN ${counted} THEN ${c}budget_used + ${p.amount} ELSE ${p.amount} END,
      budget_start = CASE WHEN ${c}budget IS NULL THEN ${c}budget_start WHEN ${counted} THEN ${c}budget_start ELSE ${start} END`,
    allows: `(${c}budget IS NULL OR (CASE WHEN ${counted} THEN ${c}budget_used ELSE 0 END) + ${p.amount} <= ${c}budget)`,
  };
}

/**
 * What a give-back of `amount` takes off `budget_used`: all of it when the debit it gives back (its
 * budget `period` and `start`, from its ledger row) was made in the token's current period, else
 * nothing (that period is over, or the budget was set anew; the current one is left alone).
 */
export function giveBackBudget(amount: string, period: string, start: string, c: string): string {
  return `${c}budget_used - CASE WHEN ${c}budget_period = ${period} AND ${c}budget_start = ${start} THEN ${amount} ELSE 0 END`;
}

/** Placeholders of a budget change (`setTokenBudget`), typed as the driver needs them. */
export interface SetBudgetParams {
  readonly budget: string;
  readonly period: string;
  readonly days: string;
  readonly anchor: string;
  readonly start: string;
  readonly id: string;
}

/**
 * Sets a token's budget and answers its row. The same period as before (a change of the amount
 * alone) keeps its anchor, its start and what it used; a new period, or a budget where there was
 * none, takes the new anchor and start with nothing used; no budget clears them all.
 */
export function setBudgetSql(p: SetBudgetParams): string {
  const same = `budget IS NOT NULL AND budget_period = ${p.period}`;
  return `UPDATE tokens SET
      budget_anchor = CASE WHEN ${p.budget} IS NULL THEN NULL WHEN ${same} THEN budget_anchor ELSE ${p.anchor} END,
      budget_start = CASE WHEN ${p.budget} IS NULL THEN NULL WHEN ${same} THEN budget_start ELSE ${p.start} END,
      budget_used = CASE WHEN ${p.budget} IS NULL THEN 0 WHEN ${same} THEN budget_used ELSE 0 END,
      budget = ${p.budget}, budget_period = ${p.period}, budget_days = ${p.days}
    WHERE id = ${p.id} RETURNING *`;
}

import type { LedgerEntry } from '../store.js';
import { giveBackBudget, spendSql as budgetSpendSql, spendValues } from '../budget-sql.js';
import { toLedger, type LedgerRow } from '../sql-rows.js';

const P = { amount: '$2::bigint', now: '$5::bigint', day: '$6::bigint', week: '$7::bigint', month: '$8::bigint' };
const BUDGET = budgetSpendSql(P, '', (x) => `(${x})::bigint`);

/**
 * Every change of `tokens.used` (and of its budget's `budget_used`) with its ledger row, as one
 * statement (data-modifying CTEs), so no quota or budget decision is read on one round trip and
 * written on another.
 *
 * SPEND: $1 token, $2 amount, $3 ref, $4 model, $5 at (the time the budget's period is found by),
 * $6 $7 $8 the starts of its day, week and month (spendParams). It spends only if the quota and
 * the budget allow it (`limits` false: whatever they say); `extra` adds CTEs that run only when it
 * did (they select FROM d) and may use $9 on. The answer is one row: `ok` (1 spent, 0 refused) and
 * the ledger row's columns (null for an amount of 0).
 */
export function spendSql(extra = '', limits = true): string {
  return `WITH d AS (
      UPDATE tokens SET used = used + $2::bigint ${BUDGET.sets}
      WHERE id = $1 ${limits ? `AND (quota IS NULL OR used + $2::bigint <= quota) AND ${BUDGET.allows}` : ''} RETURNING id, budget_period, budget_start
    ), l AS (
      INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start)
      SELECT id, 'debit', $3, $4, $2::bigint, $5, budget_period, budget_start FROM d WHERE $2::bigint > 0 RETURNING *
    )${extra}
    SELECT (SELECT count(*) FROM d)::int AS ok, l.* FROM (SELECT 1) AS one LEFT JOIN l ON true`;
}

/** The parameters $1 to $8 of a SPEND at `now`. */
export function spendParams(tokenId: string, amount: number, ref: string, model: string, now: number): unknown[] {
  const v = spendValues(now);
  return [tokenId, amount, ref, model, now, v.day, v.week, v.month];
}

/**
 * `LEFT JOIN LATERAL` the budget of the debit a give-back returns (its ledger row: the latest debit
 * of that token and ref) as `<alias>.bp` and `<alias>.bs`.
 */
export function debitBudget(alias: string, tokenId: string, ref: string): string {
  return `LEFT JOIN LATERAL (
      SELECT budget_period AS bp, budget_start AS bs FROM ledger WHERE token_id = ${tokenId} AND ref = ${ref} AND kind = 'debit' ORDER BY id DESC LIMIT 1
    ) ${alias} ON true`;
}

/**
 * Gives back $2 units to token $1 (nothing for 0) with a ledger row of kind $3, ref $4, model $5,
 * at $6, naming the budget of the debit it gives back; its period's use goes down only while that
 * period is the token's current one. Answers the ledger row, if any.
 */
export const GIVE_BACK = `WITH b AS (
    SELECT budget_period AS bp, budget_start AS bs FROM ledger WHERE token_id = $1 AND ref = $4 AND kind = 'debit' ORDER BY id DESC LIMIT 1
  ), g AS (
    UPDATE tokens t SET used = t.used - $2::bigint, budget_used = ${giveBackBudget('$2::bigint', '(SELECT bp FROM b)', '(SELECT bs FROM b)', 't.')}
    WHERE t.id = $1 AND $2::bigint > 0 RETURNING t.id
  )
  INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start)
  SELECT id, $3, $4, $5, $2::bigint, $6, (SELECT bp FROM b), (SELECT bs FROM b) FROM g RETURNING *`;

/** The ledger row of a SPEND answer, if it wrote one. */
export function ledgerOf(row: LedgerRow & { ok?: number }): LedgerEntry[] {
  return row.id === null || row.id === undefined ? [] : [toLedger(row)];
}

/** Tells listeners of ledger rows once their statement or transaction committed. */
export class LedgerListeners {
  readonly #listeners = new Set<(entry: LedgerEntry) => void>();

  add(listener: (entry: LedgerEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  tell(entries: readonly LedgerEntry[]): void {
    for (const entry of entries) {
      for (const l of this.#listeners) {
        try {
          l(entry);
        } catch {
          // A listener (metrics) must never fail the writes it hears about.
        }
      }
    }
  }
}

import type { LedgerEntry } from '../store.js';
import { toLedger, type LedgerRow } from '../sql-rows.js';

/**
 * Every change of `tokens.used` with its ledger row, as one statement (data-modifying CTEs), so no
 * quota decision is read on one round trip and written on another.
 *
 * SPEND: $1 token, $2 amount, $3 ref, $4 model, $5 at. It spends only if the quota allows it;
 * `extra` adds CTEs that run only when it did (they select FROM d) and may use $6 on. The answer
 * is one row: `ok` (1 spent, 0 refused) and the ledger row's columns (null for an amount of 0).
 */
export function spendSql(extra = '', quota = true): string {
  return `WITH d AS (
      UPDATE tokens SET used = used + $2::bigint
      WHERE id = $1 ${quota ? 'AND (quota IS NULL OR used + $2::bigint <= quota)' : ''} RETURNING id
    ), l AS (
      INSERT INTO ledger (token_id, kind, ref, model, amount, at)
      SELECT id, 'debit', $3, $4, $2::bigint, $5 FROM d WHERE $2::bigint > 0 RETURNING *
    )${extra}
    SELECT (SELECT count(*) FROM d)::int AS ok, l.* FROM (SELECT 1) AS one LEFT JOIN l ON true`;
}

/** Gives back $2 units to token $1 (nothing for 0) with a ledger row of kind $3, ref $4, model $5, at $6; answers the ledger row, if any. */
export const GIVE_BACK = `WITH g AS (
    UPDATE tokens SET used = used - $2::bigint WHERE id = $1 AND $2::bigint > 0 RETURNING id
  )
  INSERT INTO ledger (token_id, kind, ref, model, amount, at)
  SELECT id, $3, $4, $5, $2::bigint, $6 FROM g RETURNING *`;

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

import type { LedgerBalance, QuotaStore } from '../store.js';
import { onlyRow, toLedger, type HoldRow, type LedgerRow } from '../sql-rows.js';
import type { Database } from './database.js';
import { giveBackBudget } from '../budget-sql.js';
import { debitBudget, GIVE_BACK, ledgerOf, spendParams, spendSql, type LedgerListeners } from './ledger-sql.js';

const SPEND = spendSql();
const CHARGE = spendSql('', false);
const HOLD = spendSql(`, h AS (INSERT INTO holds (ref, token_id, model, amount, expires_at) SELECT $3, id, $4, $2::bigint, $9 FROM d WHERE $2::bigint > 0)`);
// Deleting the hold is the once-only step: a second release (or the sweep) finds nothing to delete.
const RELEASE = `WITH h AS (DELETE FROM holds WHERE ref = $1 RETURNING *),
  hb AS (SELECT h.*, b.bp, b.bs FROM h ${debitBudget('b', 'h.token_id', 'h.ref')}),
  g AS (
    UPDATE tokens t SET used = t.used - hb.amount, budget_used = ${giveBackBudget('hb.amount', 'hb.bp', 'hb.bs', 't.')}
    FROM hb WHERE $2::boolean AND hb.amount > 0 AND t.id = hb.token_id RETURNING t.id, hb.amount, hb.ref, hb.model, hb.bp, hb.bs
  ),
  l AS (INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start) SELECT id, 'refund', ref, model, amount, $3, bp, bs FROM g RETURNING *)
  SELECT (SELECT count(*) FROM h)::int AS ok, l.* FROM (SELECT 1) AS one LEFT JOIN l ON true`;
// SKIP LOCKED: two replicas sweeping at once take different holds. A token's budget gets back the
// holds whose debits were made in its current period.
const EXPIRE = `WITH h AS (
    DELETE FROM holds WHERE ref IN (SELECT ref FROM holds WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *
  ), hb AS (SELECT h.*, b.bp, b.bs FROM h ${debitBudget('b', 'h.token_id', 'h.ref')} WHERE h.amount > 0),
  s AS (SELECT token_id, SUM(amount)::bigint AS total FROM hb GROUP BY token_id),
  g AS (
    UPDATE tokens t SET used = t.used - s.total,
      budget_used = t.budget_used - COALESCE((SELECT SUM(hb.amount) FROM hb WHERE hb.token_id = t.id AND hb.bp = t.budget_period AND hb.bs = t.budget_start), 0)::bigint
    FROM s WHERE t.id = s.token_id RETURNING t.id
  ),
  l AS (
    INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start)
    SELECT token_id, 'refund', ref, model, amount, $3, bp, bs FROM hb WHERE token_id IN (SELECT id FROM g) RETURNING *
  )
  SELECT h.*, l.id AS ledger_id, l.at AS ledger_at, l.budget_period AS ledger_budget_period, l.budget_start AS ledger_budget_start
  FROM h LEFT JOIN l ON l.ref = h.ref ORDER BY h.expires_at`;

/** An expired hold given back, with the ledger row that gave it back (none for 0 units). */
type ExpiredRow = HoldRow & { ledger_id: number | null; ledger_at: number | null; ledger_budget_period: string | null; ledger_budget_start: number | null };

/** Spending a token's quota outside tasks (debits, holds, refunds) and reading its ledger. */
export function quotaMethods(db: Database, listeners: LedgerListeners, clock: () => number = () => Date.now()): QuotaStore {
  const spend = async (sql: string, params: unknown[]) => {
    const row = onlyRow((await db.query<LedgerRow & { ok: number }>(sql, params)).rows);
    listeners.tell(ledgerOf(row));
    return row.ok === 1;
  };
  return {
    debit: (tokenId, amount, e) => spend(SPEND, spendParams(tokenId, amount, e.ref, e.model, clock())),
    hold: (tokenId, amount, e) => spend(HOLD, [...spendParams(tokenId, amount, e.ref, e.model, clock()), e.expiresAt]),
    async charge(tokenId, amount, e) {
      await spend(CHARGE, spendParams(tokenId, amount, e.ref, e.model, clock()));
    },
    async refund(tokenId, amount, e) {
      const { rows } = await db.query<LedgerRow>(GIVE_BACK, [tokenId, amount, 'refund', e.ref, e.model, clock()]);
      listeners.tell(rows.map(toLedger));
    },
    releaseHold: (ref, refund) => spend(RELEASE, [ref, refund, clock()]),
    async expireHolds(now, limit) {
      const { rows } = await db.repeatable<ExpiredRow>(EXPIRE, [now, limit, clock()]);
      listeners.tell(
        rows.flatMap((r) =>
          r.ledger_id === null || r.ledger_at === null
            ? []
            : [
                {
                  id: r.ledger_id,
                  tokenId: r.token_id,
                  kind: 'refund' as const,
                  ref: r.ref,
                  model: r.model,
                  amount: r.amount,
                  at: r.ledger_at,
                  budgetPeriod: r.ledger_budget_period,
                  budgetStart: r.ledger_budget_start,
                },
              ],
        ),
      );
      return rows.map((r) => ({ ref: r.ref, tokenId: r.token_id, model: r.model, amount: r.amount, expiresAt: r.expires_at }));
    },
    async ledger(tokenId, after, limit) {
      const { rows } = await db.repeatable<LedgerRow>('SELECT * FROM ledger WHERE token_id = $1 AND id > $2 ORDER BY id LIMIT $3', [
        tokenId,
        after ?? 0,
        limit,
      ]);
      return rows.map(toLedger);
    },
    async ledgerBalance(tokenId) {
      // One statement: one snapshot of the token and its ledger.
      const { rows } = await db.repeatable<LedgerBalance>(
        `SELECT t.used,
           COALESCE(SUM(l.amount) FILTER (WHERE l.kind = 'debit'), 0)::bigint AS debit,
           COALESCE(SUM(l.amount) FILTER (WHERE l.kind = 'refund'), 0)::bigint AS refund,
           COALESCE(SUM(l.amount) FILTER (WHERE l.kind = 'settle'), 0)::bigint AS settle
         FROM tokens t LEFT JOIN ledger l ON l.token_id = t.id WHERE t.id = $1 GROUP BY t.id, t.used`,
        [tokenId],
      );
      return rows[0] ? { used: rows[0].used, debit: rows[0].debit, refund: rows[0].refund, settle: rows[0].settle } : null;
    },
  };
}

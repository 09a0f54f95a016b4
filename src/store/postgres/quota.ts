import type { HoldEnd, LedgerBalance, LedgerEntry, QuotaStore } from '../store.js';
import { onlyRow, toLedger, type HoldRow, type LedgerRow } from '../sql-rows.js';
import type { Database } from './database.js';
import { debitBudget, GIVE_BACK, ledgerOf, spendParams, spendSql, type LedgerListeners } from './ledger-sql.js';

const SPEND = spendSql();
const CHARGE = spendSql('', false);
const HOLD = spendSql(`, h AS (INSERT INTO holds (ref, token_id, model, amount, expires_at) SELECT $3, id, $4, $2::bigint, $9 FROM d WHERE $2::bigint > 0)`);
/**
 * The holds of CTE `h` (deleted already) whose `refund` is true given back, their sums per token in
 * one update; the answer is every hold of `h` with its refund row, if any ($3: the rows' time). A
 * token's budget gets back the holds whose debits were made in its current period.
 */
function giveBackHolds(head: string): string {
  return `WITH ${head},
  hb AS (SELECT h.*, b.bp, b.bs FROM h ${debitBudget('b', 'h.token_id', 'h.ref')} WHERE h.refund AND h.amount > 0),
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
  SELECT h.ref, h.token_id, h.model, h.amount, h.expires_at, h.refund, l.id AS ledger_id, l.at AS ledger_at, l.budget_period AS ledger_budget_period, l.budget_start AS ledger_budget_start
  FROM h LEFT JOIN l ON l.ref = h.ref ORDER BY h.expires_at`;
}
// $1 refs, $2 whether each is refunded: deleting the hold is the once-only step (a second ending, or
// the sweep, finds nothing to delete).
const END = giveBackHolds(`e AS (SELECT * FROM unnest($1::text[], $2::boolean[]) AS e(ref, refund)),
  d AS (DELETE FROM holds WHERE ref IN (SELECT ref FROM e) RETURNING *),
  h AS (SELECT d.*, e.refund FROM d JOIN e ON e.ref = d.ref)`);
// SKIP LOCKED: two replicas sweeping at once take different holds. An expired hold whose request the
// request log records as answered (status below 400) is settled, not given back.
const EXPIRE = giveBackHolds(`d AS (
    DELETE FROM holds WHERE ref IN (SELECT ref FROM holds WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *
  ),
  h AS (SELECT d.*, NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = d.ref AND r.status < 400) AS refund FROM d)`);
// The settlements whose holds were gone and for which no debit stands (their latest debit or refund row is a refund, or there is none).
const UNPAID = `SELECT e.ref FROM unnest($1::text[], $2::text[]) AS e(ref, token_id)
  WHERE COALESCE((SELECT kind FROM ledger l WHERE l.ref = e.ref AND l.token_id = e.token_id AND l.kind IN ('debit', 'refund') ORDER BY l.id DESC LIMIT 1), 'refund') = 'refund'`;

/** An ended hold, whether it was given back, and the ledger row that gave it back (none for 0 units or a settlement). */
type EndedRow = HoldRow & {
  refund: boolean;
  ledger_id: number | null;
  ledger_at: number | null;
  ledger_budget_period: string | null;
  ledger_budget_start: number | null;
};

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
    async refund(tokenId, amount, e) {
      const { rows } = await db.query<LedgerRow>(GIVE_BACK, [tokenId, amount, 'refund', e.ref, e.model, clock()]);
      listeners.tell(rows.map(toLedger));
    },
    async endHolds(endings) {
      if (endings.length === 0) return [];
      // Repeatable: run again, it finds the holds it ended gone.
      const { rows } = await db.repeatable<EndedRow>(END, [endings.map((e) => e.ref), endings.map((e) => e.outcome === 'refund'), clock()]);
      listeners.tell(refundRows(rows));
      const ended = new Set(rows.map((r) => r.ref));
      const lost = endings.filter((e) => !ended.has(e.ref) && e.outcome === 'settle');
      const unpaid = new Set<string>();
      if (lost.length > 0) {
        const found = await db.repeatable<{ ref: string }>(UNPAID, [lost.map((e) => e.ref), lost.map((e) => e.tokenId)]);
        for (const r of found.rows) unpaid.add(r.ref);
      }
      const ends: HoldEnd[] = [];
      for (const e of endings) {
        if (ended.has(e.ref)) ends.push('ended');
        else if (!unpaid.has(e.ref)) ends.push('gone');
        else {
          // Rare (a request that outlived its hold): one statement each. Should the batch run again
          // after this committed, UNPAID finds the new debit and leaves it.
          await spend(CHARGE, spendParams(e.tokenId, e.amount, e.ref, e.model, clock()));
          ends.push('charged');
        }
      }
      return ends;
    },
    async expireHolds(now, limit) {
      const { rows } = await db.repeatable<EndedRow>(EXPIRE, [now, limit, clock()]);
      listeners.tell(refundRows(rows));
      return rows.map((r) => ({
        ref: r.ref,
        tokenId: r.token_id,
        model: r.model,
        amount: r.amount,
        expiresAt: r.expires_at,
        outcome: r.refund ? ('refunded' as const) : ('settled' as const),
      }));
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

/** The refund rows an ending wrote, as the ledger's listeners hear them. */
function refundRows(rows: readonly EndedRow[]): LedgerEntry[] {
  return rows.flatMap((r) =>
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
  );
}

import type { LedgerBalance, QuotaStore } from '../store.js';
import { onlyRow, toLedger, type HoldRow, type LedgerRow } from '../sql-rows.js';
import type { Database } from './database.js';
import { GIVE_BACK, ledgerOf, spendSql, type LedgerListeners } from './ledger-sql.js';

const SPEND = spendSql();
const CHARGE = spendSql('', false);
const HOLD = spendSql(`, h AS (INSERT INTO holds (ref, token_id, model, amount, expires_at) SELECT $3, id, $4, $2::bigint, $6 FROM d WHERE $2::bigint > 0)`);
// Deleting the hold is the once-only step: a second release (or the sweep) finds nothing to delete.
const RELEASE = `WITH h AS (DELETE FROM holds WHERE ref = $1 RETURNING *),
  g AS (UPDATE tokens t SET used = t.used - h.amount FROM h WHERE $2::boolean AND h.amount > 0 AND t.id = h.token_id RETURNING t.id, h.amount, h.ref, h.model),
  l AS (INSERT INTO ledger (token_id, kind, ref, model, amount, at) SELECT id, 'refund', ref, model, amount, $3 FROM g RETURNING *)
  SELECT (SELECT count(*) FROM h)::int AS ok, l.* FROM (SELECT 1) AS one LEFT JOIN l ON true`;
// SKIP LOCKED: two replicas sweeping at once take different holds.
const EXPIRE = `WITH h AS (
    DELETE FROM holds WHERE ref IN (SELECT ref FROM holds WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING *
  ), s AS (SELECT token_id, SUM(amount)::bigint AS total FROM h WHERE amount > 0 GROUP BY token_id),
  g AS (UPDATE tokens t SET used = t.used - s.total FROM s WHERE t.id = s.token_id RETURNING t.id),
  l AS (INSERT INTO ledger (token_id, kind, ref, model, amount, at) SELECT token_id, 'refund', ref, model, amount, $3 FROM h WHERE amount > 0 AND token_id IN (SELECT id FROM g) RETURNING *)
  SELECT h.*, l.id AS ledger_id, l.at AS ledger_at FROM h LEFT JOIN l ON l.ref = h.ref ORDER BY h.expires_at`;

/** Spending a token's quota outside tasks (debits, holds, refunds) and reading its ledger. */
export function quotaMethods(db: Database, listeners: LedgerListeners): QuotaStore {
  const spend = async (sql: string, params: unknown[]) => {
    const row = onlyRow((await db.query<LedgerRow & { ok: number }>(sql, params)).rows);
    listeners.tell(ledgerOf(row));
    return row.ok === 1;
  };
  return {
    debit: (tokenId, amount, e) => spend(SPEND, [tokenId, amount, e.ref, e.model, Date.now()]),
    hold: (tokenId, amount, e) => spend(HOLD, [tokenId, amount, e.ref, e.model, Date.now(), e.expiresAt]),
    async charge(tokenId, amount, e) {
      await spend(CHARGE, [tokenId, amount, e.ref, e.model, Date.now()]);
    },
    async refund(tokenId, amount, e) {
      const { rows } = await db.query<LedgerRow>(GIVE_BACK, [tokenId, amount, 'refund', e.ref, e.model, Date.now()]);
      listeners.tell(rows.map(toLedger));
    },
    releaseHold: (ref, refund) => spend(RELEASE, [ref, refund, Date.now()]),
    async expireHolds(now, limit) {
      const { rows } = await db.repeatable<HoldRow & { ledger_id: number | null; ledger_at: number | null }>(EXPIRE, [now, limit, Date.now()]);
      listeners.tell(
        rows.flatMap((r) =>
          r.ledger_id === null || r.ledger_at === null
            ? []
            : [{ id: r.ledger_id, tokenId: r.token_id, kind: 'refund' as const, ref: r.ref, model: r.model, amount: r.amount, at: r.ledger_at }],
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

import type { HoldEnd, LedgerBalance, LedgerKind, QuotaStore } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import type { LedgerWrites } from './ledger-writes.js';
import { toLedger, type HoldRow, type LedgerRow, type TokenRow } from '../sql-rows.js';

/** Spending a token's quota outside tasks (debits, holds, refunds) and reading its ledger. */
export function quotaMethods(db: Db, { write, now }: GroupCommit, money: LedgerWrites): QuotaStore {
  const insertHold = db.prepare('INSERT INTO holds (ref, token_id, model, amount, expires_at) VALUES (?, ?, ?, ?, ?)');
  // One statement ends a hold: what it deletes is what it answers (a second release finds nothing).
  const endHold = db.prepare('DELETE FROM holds WHERE ref = ? RETURNING token_id, model, amount');
  const deleteHold = db.prepare('DELETE FROM holds WHERE ref = ?');
  // An expired hold whose request the request log records as answered is settled, not given back.
  const expiredHolds = db.prepare(
    'SELECT h.*, EXISTS (SELECT 1 FROM requests r WHERE r.id = h.ref AND r.status < 400) AS answered FROM holds h WHERE h.expires_at <= ? ORDER BY h.expires_at LIMIT ?',
  );
  // Whether a debit of the request stands: its latest debit or refund row is a debit.
  const lastMove = db.prepare("SELECT kind FROM ledger WHERE ref = ? AND token_id = ? AND kind IN ('debit', 'refund') ORDER BY id DESC LIMIT 1");
  const tokenById = db.prepare('SELECT * FROM tokens WHERE id = ?');
  const ledgerPage = db.prepare('SELECT * FROM ledger WHERE token_id = ? AND id > ? ORDER BY id LIMIT ?');
  const ledgerSums = db.prepare('SELECT kind, SUM(amount) AS total FROM ledger WHERE token_id = ? GROUP BY kind');
  return {
    debit(tokenId, amount, entry) {
      return write(() => money.spend(tokenId, amount, entry.ref, entry.model));
    },
    async refund(tokenId, amount, entry) {
      await write(() => money.giveBack(tokenId, 'refund', amount, entry.ref, entry.model));
    },
    // Exact at once, durable with the turn's commit: the request does not wait for that commit
    // before it calls the vendor (a crash before it leaves nothing charged and nothing answered),
    // and the commit comes at the end of this turn, long before any vendor can answer. The
    // settlement follows the answer (src/quota/hold-endings.ts).
    async hold(tokenId, amount, entry) {
      return now(() => {
        if (!money.spend(tokenId, amount, entry.ref, entry.model)) return false;
        if (amount > 0) insertHold.run(entry.ref, tokenId, entry.model, amount, entry.expiresAt);
        return true;
      });
    },
    endHolds(endings) {
      return write(() =>
        endings.map((e): HoldEnd => {
          const row = endHold.get(e.ref) as Pick<HoldRow, 'token_id' | 'model' | 'amount'> | undefined;
          if (row) {
            if (e.outcome === 'refund') money.giveBack(row.token_id, 'refund', row.amount, e.ref, row.model);
            return 'ended';
          }
          if (e.outcome === 'refund' || (lastMove.get(e.ref, e.tokenId) as { kind: LedgerKind } | undefined)?.kind === 'debit') return 'gone';
          money.force(e.tokenId, e.amount, e.ref, e.model);
          return 'charged';
        }),
      );
    },
    expireHolds(now, limit) {
      return write(() =>
        (expiredHolds.all(now, limit) as (HoldRow & { answered: number })[]).map((row) => {
          deleteHold.run(row.ref);
          if (!row.answered) money.giveBack(row.token_id, 'refund', row.amount, row.ref, row.model);
          return {
            ref: row.ref,
            tokenId: row.token_id,
            model: row.model,
            amount: row.amount,
            expiresAt: row.expires_at,
            outcome: row.answered ? ('settled' as const) : ('refunded' as const),
          };
        }),
      );
    },
    async ledger(tokenId, after, limit) {
      return (ledgerPage.all(tokenId, after ?? 0, limit) as LedgerRow[]).map(toLedger);
    },
    async ledgerBalance(tokenId) {
      // Two reads in one synchronous step: no write of this store can land between them.
      const token = tokenById.get(tokenId) as TokenRow | undefined;
      if (!token) return null;
      const balance: Record<LedgerKind, number> & { used: number } = { used: token.used, debit: 0, refund: 0, settle: 0 };
      for (const r of ledgerSums.all(tokenId) as { kind: LedgerKind; total: number }[]) if (r.kind in balance) balance[r.kind] = r.total;
      return balance as LedgerBalance;
    },
  };
}

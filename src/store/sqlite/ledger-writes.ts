import { spendSql, spendValues } from '../budget-sql.js';
import type { LedgerKind } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/**
 * Every change of `tokens.used` (and of its budget's `budget_used`), with its ledger row. Each runs
 * inside a group-commit write (./group-commit.ts), never alone.
 */
export interface LedgerWrites {
  /** Spends `amount` if the quota and the budget allow it; false, with nothing written, when they do not. */
  spend(tokenId: string, amount: number, ref: string, model: string): boolean;
  /** Spends `amount` whatever the quota and the budget. */
  force(tokenId: string, amount: number, ref: string, model: string): void;
  /** Gives back `amount` (nothing for 0) of the debit of `ref`. */
  giveBack(tokenId: string, kind: 'refund' | 'settle', amount: number, ref: string, model: string): void;
}

const P = { amount: '@amount', now: '@now', day: '@day', week: '@week', month: '@month' };
const BUDGET = spendSql(P, '', (x) => `CAST(${x} AS INTEGER)`);

/** The budget a spend counted in, as its ledger row names it. */
type Counted = { budget_period: string | null; budget_start: number | null };

export function ledgerWrites(db: Db, commits: GroupCommit, clock: () => number = () => Date.now()): LedgerWrites {
  const debit = db.prepare(
    `UPDATE tokens SET used = used + @amount ${BUDGET.sets}
     WHERE id = @id AND (quota IS NULL OR used + @amount <= quota) AND ${BUDGET.allows} RETURNING budget_period, budget_start`,
  );
  const forceDebit = db.prepare(`UPDATE tokens SET used = used + @amount ${BUDGET.sets} WHERE id = @id RETURNING budget_period, budget_start`);
  // The budget of the debit given back: its ledger row (the latest, should a request have been charged again).
  const debitOf = db.prepare("SELECT budget_period, budget_start FROM ledger WHERE token_id = ? AND ref = ? AND kind = 'debit' ORDER BY id DESC LIMIT 1");
  // No clamp at 0: a refund beyond what was debited would be a bug, and the ledger must show it.
  const giveBackUnits = db.prepare(
    `UPDATE tokens SET used = used - @amount,
       budget_used = budget_used - CASE WHEN budget_period = @period AND budget_start = @start THEN @amount ELSE 0 END
     WHERE id = @id`,
  );
  const insertLedger = db.prepare('INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');

  const record = (tokenId: string, kind: LedgerKind, ref: string, model: string, amount: number, at: number, b: Counted) => {
    const id = Number(insertLedger.run(tokenId, kind, ref, model, amount, at, b.budget_period, b.budget_start).lastInsertRowid);
    commits.wrote({ id, tokenId, kind, ref, model, amount, at, budgetPeriod: b.budget_period, budgetStart: b.budget_start });
  };
  const params = (tokenId: string, amount: number) => ({ id: tokenId, amount, ...spendValues(clock()) });
  return {
    spend(tokenId, amount, ref, model) {
      const p = params(tokenId, amount);
      const counted = debit.get(p) as Counted | undefined;
      if (!counted) return false;
      if (amount > 0) record(tokenId, 'debit', ref, model, amount, p.now, counted);
      return true;
    },
    force(tokenId, amount, ref, model) {
      if (amount <= 0) return;
      const p = params(tokenId, amount);
      const counted = forceDebit.get(p) as Counted | undefined;
      if (counted) record(tokenId, 'debit', ref, model, amount, p.now, counted);
    },
    giveBack(tokenId, kind, amount, ref, model) {
      if (amount <= 0) return;
      const of = (debitOf.get(tokenId, ref) as Counted | undefined) ?? { budget_period: null, budget_start: null };
      if (giveBackUnits.run({ id: tokenId, amount, period: of.budget_period, start: of.budget_start }).changes === 1) {
        record(tokenId, kind, ref, model, amount, clock(), of);
      }
    },
  };
}

import type { LedgerKind } from '../store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/**
 * Every change of `tokens.used`, with its ledger row. Each runs inside a group-commit write
 * (./group-commit.ts), never alone.
 */
export interface LedgerWrites {
  /** Spends `amount` if the quota allows it; false, with nothing written, when it does not. */
  spend(tokenId: string, amount: number, ref: string, model: string): boolean;
  /** Spends `amount` whatever the quota. */
  force(tokenId: string, amount: number, ref: string, model: string): void;
  /** Gives back `amount` (nothing for 0). */
  giveBack(tokenId: string, kind: 'refund' | 'settle', amount: number, ref: string, model: string): void;
}

export function ledgerWrites(db: Db, commits: GroupCommit): LedgerWrites {
  const debit = db.prepare('UPDATE tokens SET used = used + ? WHERE id = ? AND (quota IS NULL OR used + ? <= quota)');
  const forceDebit = db.prepare('UPDATE tokens SET used = used + ? WHERE id = ?');
  // No clamp at 0: a refund beyond what was debited would be a bug, and the ledger must show it.
  const giveBackUnits = db.prepare('UPDATE tokens SET used = used - ? WHERE id = ?');
  const insertLedger = db.prepare('INSERT INTO ledger (token_id, kind, ref, model, amount, at) VALUES (?, ?, ?, ?, ?, ?)');

  const record = (tokenId: string, kind: LedgerKind, ref: string, model: string, amount: number) => {
    const at = Date.now();
    const id = Number(insertLedger.run(tokenId, kind, ref, model, amount, at).lastInsertRowid);
    commits.wrote({ id, tokenId, kind, ref, model, amount, at });
  };
  return {
    spend(tokenId, amount, ref, model) {
      if (debit.run(amount, tokenId, amount).changes !== 1) return false;
      if (amount > 0) record(tokenId, 'debit', ref, model, amount);
      return true;
    },
    force(tokenId, amount, ref, model) {
      if (amount > 0 && forceDebit.run(amount, tokenId).changes === 1) record(tokenId, 'debit', ref, model, amount);
    },
    giveBack(tokenId, kind, amount, ref, model) {
      if (amount > 0 && giveBackUnits.run(amount, tokenId).changes === 1) record(tokenId, kind, ref, model, amount);
    },
  };
}

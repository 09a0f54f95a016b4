import type { UsageStore } from '../store.js';
import { DAY_MS, toUsage, type UsageRow } from '../sql-rows.js';
import type { Db } from './database.js';

/**
 * The ledger summed by UTC day, token and model, in SQL: the range is read through `ledger_by_at`
 * and only the groups come back. The day is `at / DAY_MS` (integer division), UTC by construction.
 */
export function usageMethods(db: Db): UsageStore {
  const groups = db.prepare(`
    SELECT g.*, t.name AS token_name FROM (
      SELECT at / ${DAY_MS} AS day, token_id, model,
        SUM(CASE WHEN kind = 'debit' THEN amount ELSE 0 END) AS debit,
        SUM(CASE WHEN kind = 'refund' THEN amount ELSE 0 END) AS refund,
        SUM(CASE WHEN kind = 'settle' THEN amount ELSE 0 END) AS settle,
        SUM(kind = 'debit') AS debits,
        SUM(kind = 'refund') AS refunds
      FROM ledger
      WHERE at >= ? AND at < ? AND (? IS NULL OR token_id = ?) AND (? IS NULL OR model = ?)
      GROUP BY day, token_id, model
    ) AS g LEFT JOIN tokens t ON t.id = g.token_id
    ORDER BY g.day, g.token_id, g.model
    LIMIT ?`);
  return {
    async usage({ from, to, tokenId, model }, limit) {
      return (groups.all(from, to, tokenId, tokenId, model, model, limit) as UsageRow[]).map(toUsage);
    },
  };
}

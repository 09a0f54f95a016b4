import type { UsageStore } from '../store.js';
import { DAY_MS, toUsage, type UsageRow } from '../sql-rows.js';
import type { Database } from './database.js';

/**
 * The ledger summed by UTC day, token and model, in SQL: the range is read through `ledger_by_at`
 * and only the groups come back. The day is `at / DAY_MS` (bigint division), UTC whatever the
 * session's time zone; ids and models order byte-wise (`COLLATE "C"`), as SQLite orders them.
 */
const GROUPS = `
  SELECT g.*, t.name AS token_name FROM (
    SELECT at / ${DAY_MS} AS day, token_id, model,
      COALESCE(SUM(amount) FILTER (WHERE kind = 'debit'), 0)::bigint AS debit,
      COALESCE(SUM(amount) FILTER (WHERE kind = 'refund'), 0)::bigint AS refund,
      COALESCE(SUM(amount) FILTER (WHERE kind = 'settle'), 0)::bigint AS settle,
      COUNT(*) FILTER (WHERE kind = 'debit') AS debits,
      COUNT(*) FILTER (WHERE kind = 'refund') AS refunds
    FROM ledger
    WHERE at >= $1 AND at < $2 AND ($3::text IS NULL OR token_id = $3) AND ($4::text IS NULL OR model = $4)
    GROUP BY 1, token_id, model
  ) AS g LEFT JOIN tokens t ON t.id = g.token_id
  ORDER BY g.day, g.token_id COLLATE "C", g.model COLLATE "C"
  LIMIT $5`;

export function usageMethods(db: Database): UsageStore {
  return {
    async usage({ from, to, tokenId, model }, limit) {
      const { rows } = await db.repeatable<UsageRow>(GROUPS, [from, to, tokenId, model, limit]);
      return rows.map(toUsage);
    },
  };
}

import type { OperatorTaskStore } from '../store.js';
import { toLedger, toTask, type LedgerRow, type TaskRow } from '../sql-rows.js';
import { findTasksSql } from '../task-query.js';
import { readStates } from '../task-states.js';
import type { Database } from './database.js';

// One statement, one snapshot: the ledger rows are those of the task as read. ledger_by_ref finds
// them; a task has a debit and at most one settlement or refund, the limit is a backstop.
const HISTORY = `SELECT t.*, COALESCE((
    SELECT json_agg(l ORDER BY l.id) FROM (SELECT * FROM ledger WHERE ref = $1 ORDER BY id LIMIT 100) AS l
  ), '[]') AS ledger_rows
  FROM tasks t WHERE t.id = $1`;

/** What operators read of tasks (GET /admin/tasks): every token's, filtered, and one with its states and ledger rows. */
export function operatorTaskMethods(db: Database): OperatorTaskStore {
  return {
    async findTasks(q) {
      const { sql, args } = findTasksSql(q, (n) => `$${n}`);
      return (await db.repeatable<TaskRow>(sql, args)).rows.map(toTask);
    },
    async taskHistory(id) {
      const row = (await db.repeatable<TaskRow & { ledger_rows: LedgerRow[] }>(HISTORY, [id])).rows[0];
      if (!row) return null;
      // json_agg gives BIGINT columns as JSON numbers, as the pool's parser does (./database.ts).
      return { task: toTask(row), states: readStates(row.history), ledger: row.ledger_rows.map(toLedger) };
    },
  };
}

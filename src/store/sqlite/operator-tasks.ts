import type { OperatorTaskStore, TaskQuery } from '../store.js';
import { toLedger, toTask, type LedgerRow, type TaskRow } from '../sql-rows.js';
import { findTasksSql } from '../task-query.js';
import { readStates } from '../task-states.js';
import type { Db } from './database.js';

/** What operators read of tasks (GET /admin/tasks): every token's, filtered, and one with its states and ledger rows. */
export function operatorTaskMethods(db: Db): OperatorTaskStore {
  // One prepared statement per shape of query (which filters, whether a cursor): at most 32.
  const shapes = new Map<string, ReturnType<Db['prepare']>>();
  const taskById = db.prepare('SELECT * FROM tasks WHERE id = ?');
  // ledger_by_ref; a task has a debit and at most one settlement or refund, the limit is a backstop.
  const ledgerOfRef = db.prepare('SELECT * FROM ledger WHERE ref = ? ORDER BY id LIMIT 100');
  return {
    async findTasks(q: TaskQuery) {
      const { sql, args } = findTasksSql(q, () => '?');
      let stmt = shapes.get(sql);
      if (!stmt) shapes.set(sql, (stmt = db.prepare(sql)));
      return (stmt.all(args) as TaskRow[]).map(toTask);
    },
    async taskHistory(id) {
      // Both reads in one turn of the event loop: no write of the group commit comes between them.
      const row = taskById.get(id) as TaskRow | undefined;
      if (!row) return null;
      return { task: toTask(row), states: readStates(row.history), ledger: (ledgerOfRef.all(id) as LedgerRow[]).map(toLedger) };
    },
  };
}

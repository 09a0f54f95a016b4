import type { TaskQuery } from './store.js';

/** Filters of a TaskQuery and their columns. */
const FILTERS = [
  ['status', 'status'],
  ['model', 'model'],
  ['channel', 'channel'],
  ['tokenId', 'token_id'],
] as const;

/**
 * The statement of Store.findTasks for both SQL drivers (`param(n)` writes the n-th placeholder,
 * from 1), and its arguments. The text depends only on which filters are set, so a driver can
 * keep one prepared statement per shape.
 *
 * No plan sorts the table: the order (created_at DESC, id DESC) is read off an index walked
 * backwards, and the walk stops once `limit` rows are kept. `tasks_by_created (created_at, id)`
 * serves the unfiltered list and the model and channel filters; `tasks_by_status (status,
 * created_at, id)` a status filter (PostgreSQL may walk tasks_by_created instead when the status is
 * common, which stops as soon); `tasks_by_token (token_id, created_at, seq)` a token filter, sorting
 * only ties of one millisecond by id. The cursor is a row comparison on the index's columns, a range
 * of it (EXPLAIN on SQLite 3.45 and PostgreSQL 15 with 100,000 tasks).
 */
export function findTasksSql(q: TaskQuery, param: (n: number) => string): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown) => (args.push(v), param(args.length));
  for (const [field, column] of FILTERS) if (q[field] !== undefined) where.push(`${column} = ${arg(q[field])}`);
  if (q.before) where.push(`(created_at, id) < (${arg(q.before.createdAt)}, ${arg(q.before.id)})`);
  const sql = `SELECT * FROM tasks ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${arg(q.limit)}`;
  return { sql, args };
}

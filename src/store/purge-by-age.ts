/**
 * The one statement both logs are purged by (the request log, GATEWAY_REQUEST_LOG_DAYS; the audit
 * log, GATEWAY_AUDIT_DAYS): up to a page of a table's oldest rows before a time, read off its
 * `(at, id)` index, so a purge is many short statements, never one that holds the table.
 */

/** Tables purged by age: each has `at` (Unix ms) and an index that begins with it. */
export type AgedTable = 'requests' | 'audit';

/**
 * `DELETE` of up to `$2` rows of `table` with `at < $1`, oldest first; `key` names the rows
 * (SQLite's `rowid`, PostgreSQL's `id`); `param(n)` writes the n-th placeholder, from 1.
 */
export function deleteOldestSql(table: AgedTable, key: 'rowid' | 'id', param: (n: number) => string): string {
  return `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE at < ${param(1)} ORDER BY at LIMIT ${param(2)})`;
}

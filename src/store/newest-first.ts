/**
 * A page of a log table (the request log, the audit log) newest first, as both SQL drivers read it:
 * equality filters, a time range, and a keyset cursor on `(at, id)` walked backwards along the
 * table's `(at, id)` index, so a page is stable while newer rows are written.
 */

/** What every page of a log asks besides its own filters. */
export interface NewestFirstPage {
  readonly from?: number;
  readonly to?: number;
  /** Where the previous page ended; null: from the newest. */
  readonly before: { readonly at: number; readonly id: string } | null;
  readonly limit: number;
}

/**
 * The statement and its arguments (`param(n)` writes the n-th placeholder, from 1) for a page of
 * `table`, `filters` naming each query field and its column.
 */
export function newestFirstSql<Q extends NewestFirstPage>(
  table: string,
  filters: readonly (readonly [keyof Q, string])[],
  q: Q,
  param: (n: number) => string,
): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown) => (args.push(v), param(args.length));
  for (const [field, column] of filters) if (q[field] !== undefined) where.push(`${column} = ${arg(q[field])}`);
  if (q.from !== undefined) where.push(`at >= ${arg(q.from)}`);
  if (q.to !== undefined) where.push(`at < ${arg(q.to)}`);
  if (q.before) where.push(`(at, id) < (${arg(q.before.at)}, ${arg(q.before.id)})`);
  const sql = `SELECT * FROM ${table} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ${arg(q.limit)}`;
  return { sql, args };
}

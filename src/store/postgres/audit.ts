import { auditRow, findAuditSql, toAudit, type AuditRow, type AuditStore } from '../audit-store.js';
import { deleteOldestSql } from '../purge-by-age.js';
import type { Database } from './database.js';

/** The audit log of operator actions. */
export function auditMethods(db: Database): AuditStore {
  return {
    async putAudit(record) {
      const r = auditRow(record);
      // The id is the caller's: sent again after a lost answer, the row is kept once.
      await db.repeatable('INSERT INTO audit (id, at, actor, action, target, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING', [
        r.id,
        r.at,
        r.actor,
        r.action,
        r.target,
        r.before,
        r.after,
      ]);
    },
    async findAudit(q) {
      const { sql, args } = findAuditSql(q, (n) => `$${n}`);
      return (await db.repeatable<AuditRow>(sql, args)).rows.map(toAudit);
    },
    async deleteAuditBefore(before, limit) {
      const { rowCount } = await db.repeatable(
        deleteOldestSql('audit', 'id', (n) => `$${n}`),
        [before, limit],
      );
      return rowCount ?? 0;
    },
  };
}

import { auditRow, findAuditSql, toAudit, type AuditQuery, type AuditRow, type AuditStore } from '../audit-store.js';
import { deleteOldestSql } from '../purge-by-age.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** The audit log of operator actions. */
export function auditMethods(db: Db, { write }: GroupCommit): AuditStore {
  const insert = db.prepare('INSERT OR IGNORE INTO audit (id, at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const old = db.prepare(deleteOldestSql('audit', 'rowid', () => '?'));
  const shapes = new Map<string, ReturnType<Db['prepare']>>();
  return {
    putAudit(record) {
      const r = auditRow(record);
      return write(() => {
        insert.run(r.id, r.at, r.actor, r.action, r.target, r.before, r.after);
      });
    },
    async findAudit(q: AuditQuery) {
      const { sql, args } = findAuditSql(q, () => '?');
      let stmt = shapes.get(sql);
      if (!stmt) shapes.set(sql, (stmt = db.prepare(sql)));
      return (stmt.all(args) as AuditRow[]).map(toAudit);
    },
    deleteAuditBefore(before, limit) {
      return write(() => old.run(before, limit).changes);
    },
  };
}

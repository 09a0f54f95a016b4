import type { RequestLogStore, RequestQuery, RequestRow } from '../request-log-store.js';
import { findRequestsSql, toRequest } from '../request-log-store.js';
import { deleteOldestSql } from '../purge-by-age.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** The request log: batches written as one step of the group commit, pages read off `requests_by_at`. */
export function requestLogMethods(db: Db, { write }: GroupCommit): RequestLogStore {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO requests (id, at, request_id, token_id, route, model, channel, status, error, ms, task_id, units) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const old = db.prepare(deleteOldestSql('requests', 'rowid', () => '?'));
  // One prepared statement per shape of query (which filters, whether a cursor).
  const shapes = new Map<string, ReturnType<Db['prepare']>>();
  return {
    putRequests(records) {
      return write(() => {
        for (const r of records)
          insert.run(r.id, r.at, r.requestId, r.tokenId, r.route, r.model, r.channel, r.status, r.error, Math.round(r.ms), r.taskId, r.units);
      });
    },
    async findRequests(q: RequestQuery) {
      const { sql, args } = findRequestsSql(q, () => '?');
      let stmt = shapes.get(sql);
      if (!stmt) shapes.set(sql, (stmt = db.prepare(sql)));
      return (stmt.all(args) as RequestRow[]).map(toRequest);
    },
    deleteRequestsBefore(before, limit) {
      return write(() => old.run(before, limit).changes);
    },
  };
}

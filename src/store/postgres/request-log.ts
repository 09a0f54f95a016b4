import { findRequestsSql, toRequest, type RequestLogStore, type RequestRow } from '../request-log-store.js';
import { deleteOldestSql } from '../purge-by-age.js';
import type { Database } from './database.js';

/**
 * A batch as one statement over arrays (one round trip whatever its size); `ON CONFLICT DO NOTHING`
 * makes a batch sent again after a lost answer harmless, so it may be repeated.
 */
const INSERT = `INSERT INTO requests (id, at, request_id, token_id, route, model, channel, status, error, ms, task_id, units)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[], $12::bigint[])
  ON CONFLICT (id) DO NOTHING`;

/** The request log: batches in one statement, pages read off `requests_by_at`. */
export function requestLogMethods(db: Database): RequestLogStore {
  return {
    async putRequests(records) {
      if (records.length === 0) return;
      const col = <T>(f: (r: (typeof records)[number]) => T) => records.map(f);
      await db.repeatable(INSERT, [
        col((r) => r.id),
        col((r) => r.at),
        col((r) => r.requestId),
        col((r) => r.tokenId),
        col((r) => r.route),
        col((r) => r.model),
        col((r) => r.channel),
        col((r) => r.status),
        col((r) => r.error),
        col((r) => Math.round(r.ms)),
        col((r) => r.taskId),
        col((r) => r.units),
      ]);
    },
    async findRequests(q) {
      const { sql, args } = findRequestsSql(q, (n) => `$${n}`);
      return (await db.repeatable<RequestRow>(sql, args)).rows.map(toRequest);
    },
    async deleteRequestsBefore(before, limit) {
      const { rowCount } = await db.repeatable(
        deleteOldestSql('requests', 'id', (n) => `$${n}`),
        [before, limit],
      );
      return rowCount ?? 0;
    },
  };
}

import { type ArchivedFileRow, type ArchiveJobRow, type ArchiveStore, toArchivedFile, toArchiveJob } from '../archive-store.js';
import type { Database } from './database.js';

/** The result archive's jobs, files and token retention (../archive-store.ts); a task's job is queued by a trigger (./migrations.ts). */
export function archiveMethods(db: Database): ArchiveStore {
  return {
    async setArchiveOn(yes) {
      await db.repeatable(yes ? 'INSERT INTO archive_on (one) VALUES (1) ON CONFLICT DO NOTHING' : 'DELETE FROM archive_on');
    },
    async queueArchiveJobs(jobs) {
      if (jobs.length === 0) return;
      await db.repeatable(
        `INSERT INTO archive_jobs (id, kind, token_id, route, created_at, due_at)
         SELECT id, kind, token_id, route, at, at FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS j (id, kind, token_id, route, at)
         ON CONFLICT (id) DO NOTHING`,
        [jobs.map((j) => j.id), jobs.map((j) => j.kind), jobs.map((j) => j.tokenId), jobs.map((j) => j.route), jobs.map((j) => j.createdAt)],
      );
    },
    async claimArchiveJobs(owner, now, until, limit) {
      // SKIP LOCKED: replicas claiming at once each take other jobs instead of waiting on each other's rows.
      const { rows } = await db.query<ArchiveJobRow>(
        `UPDATE archive_jobs SET lease_owner = $1, lease_until = $2 WHERE id IN
           (SELECT id FROM archive_jobs WHERE failed = 0 AND due_at <= $3 AND (lease_owner IS NULL OR lease_until <= $3)
            ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING *`,
        [owner, until, now, limit],
      );
      return rows.map(toArchiveJob).sort((a, b) => a.dueAt - b.dueAt);
    },
    async renewArchiveLeases(owner, ids, until) {
      if (ids.length === 0) return [];
      const { rows } = await db.repeatable<{ id: string }>(
        'UPDATE archive_jobs SET lease_until = $1 WHERE id = ANY($2::text[]) AND lease_owner = $3 RETURNING id',
        [until, ids, owner],
      );
      return rows.map((r) => r.id);
    },
    async putArchivedFile(f) {
      await db.repeatable(
        `INSERT INTO archive_files (owner, idx, key, size, content_type, archived_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (owner, idx) DO UPDATE SET key = excluded.key, size = excluded.size, content_type = excluded.content_type,
           archived_at = excluded.archived_at, expires_at = excluded.expires_at`,
        [f.owner, f.index, f.key, f.size, f.contentType, f.archivedAt, f.expiresAt],
      );
    },
    async finishArchiveJob(id, owner) {
      const { rowCount } = await db.repeatable('DELETE FROM archive_jobs WHERE id = $1 AND lease_owner = $2', [id, owner]);
      return rowCount === 1;
    },
    async retryArchiveJob(id, owner, dueAt, error, failed) {
      const { rowCount } = await db.query(
        'UPDATE archive_jobs SET attempts = attempts + 1, last_error = $1, due_at = $2, failed = $3, lease_owner = NULL, lease_until = NULL WHERE id = $4 AND lease_owner = $5',
        [error.slice(0, 500), dueAt, failed ? 1 : 0, id, owner],
      );
      return rowCount === 1;
    },
    async getArchiveJob(id) {
      const { rows } = await db.repeatable<ArchiveJobRow>('SELECT * FROM archive_jobs WHERE id = $1', [id]);
      return rows[0] ? toArchiveJob(rows[0]) : null;
    },
    async getArchivedFiles(owner) {
      const { rows } = await db.repeatable<ArchivedFileRow>('SELECT * FROM archive_files WHERE owner = $1 ORDER BY idx', [owner]);
      return rows.map(toArchivedFile);
    },
    async getArchivedFile(owner, index, now) {
      const { rows } = await db.repeatable<ArchivedFileRow>('SELECT * FROM archive_files WHERE owner = $1 AND idx = $2 AND expires_at > $3', [
        owner,
        index,
        now,
      ]);
      return rows[0] ? toArchivedFile(rows[0]) : null;
    },
    async expiredArchivedFiles(now, limit) {
      const { rows } = await db.repeatable<ArchivedFileRow>('SELECT * FROM archive_files WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2', [now, limit]);
      return rows.map(toArchivedFile);
    },
    async deleteArchivedFiles(files) {
      if (files.length === 0) return;
      await db.repeatable('DELETE FROM archive_files f USING unnest($1::text[], $2::int[]) AS d (owner, idx) WHERE f.owner = d.owner AND f.idx = d.idx', [
        files.map((f) => f.owner),
        files.map((f) => f.index),
      ]);
    },
    async deleteFailedArchiveJobs(before, limit) {
      const { rowCount } = await db.repeatable(
        'DELETE FROM archive_jobs WHERE id IN (SELECT id FROM archive_jobs WHERE failed = 1 AND created_at < $1 LIMIT $2)',
        [before, limit],
      );
      return rowCount ?? 0;
    },
    async archiveTotals() {
      const { rows } = await db.repeatable<{ files: string; bytes: string; queued: string; failed: string }>(
        `SELECT (SELECT count(*) FROM archive_files) AS files, (SELECT COALESCE(sum(size), 0) FROM archive_files) AS bytes,
                (SELECT count(*) FILTER (WHERE failed = 0) FROM archive_jobs) AS queued, (SELECT count(*) FILTER (WHERE failed = 1) FROM archive_jobs) AS failed`,
      );
      const r = rows[0];
      return { files: Number(r?.files ?? 0), bytes: Number(r?.bytes ?? 0), queued: Number(r?.queued ?? 0), failed: Number(r?.failed ?? 0) };
    },
    async setTokenArchiveDays(tokenId, days) {
      if (days === null) await db.repeatable('DELETE FROM token_archive WHERE token_id = $1', [tokenId]);
      else
        await db.repeatable(
          'INSERT INTO token_archive (token_id, keep_days) VALUES ($1, $2) ON CONFLICT (token_id) DO UPDATE SET keep_days = excluded.keep_days',
          [tokenId, days],
        );
    },
    async getTokenArchiveDays(tokenId) {
      const { rows } = await db.repeatable<{ keep_days: number }>('SELECT keep_days FROM token_archive WHERE token_id = $1', [tokenId]);
      return rows[0] ? Number(rows[0].keep_days) : null;
    },
  };
}

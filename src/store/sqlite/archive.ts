import { type ArchivedFileRow, type ArchiveJobRow, type ArchiveStore, toArchivedFile, toArchiveJob } from '../archive-store.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** The result archive's jobs, files and token retention (../archive-store.ts); a task's job is queued by a trigger (./migrations.ts). */
export function archiveMethods(db: Db, { write }: GroupCommit): ArchiveStore {
  const on = db.prepare('INSERT OR IGNORE INTO archive_on (one) VALUES (1)');
  const off = db.prepare('DELETE FROM archive_on');
  const queue = db.prepare('INSERT OR IGNORE INTO archive_jobs (id, kind, token_id, route, created_at, due_at) VALUES (?, ?, ?, ?, ?, ?)');
  const claim = db.prepare(
    `UPDATE archive_jobs SET lease_owner = ?, lease_until = ? WHERE id IN
       (SELECT id FROM archive_jobs WHERE failed = 0 AND due_at <= ? AND (lease_owner IS NULL OR lease_until <= ?) ORDER BY due_at LIMIT ?) RETURNING *`,
  );
  const renew = db.prepare('UPDATE archive_jobs SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ? RETURNING id');
  const putFile = db.prepare(
    `INSERT INTO archive_files (owner, idx, key, size, content_type, archived_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (owner, idx) DO UPDATE SET key = excluded.key, size = excluded.size, content_type = excluded.content_type,
       archived_at = excluded.archived_at, expires_at = excluded.expires_at`,
  );
  const finish = db.prepare('DELETE FROM archive_jobs WHERE id = ? AND lease_owner = ?');
  const retry = db.prepare(
    'UPDATE archive_jobs SET attempts = attempts + 1, last_error = ?, due_at = ?, failed = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
  );
  const jobById = db.prepare('SELECT * FROM archive_jobs WHERE id = ?');
  const filesOf = db.prepare('SELECT * FROM archive_files WHERE owner = ? ORDER BY idx');
  const fileAt = db.prepare('SELECT * FROM archive_files WHERE owner = ? AND idx = ? AND expires_at > ?');
  const expired = db.prepare('SELECT * FROM archive_files WHERE expires_at <= ? ORDER BY expires_at LIMIT ?');
  const deleteFile = db.prepare('DELETE FROM archive_files WHERE owner = ? AND idx = ?');
  const deleteFailed = db.prepare('DELETE FROM archive_jobs WHERE id IN (SELECT id FROM archive_jobs WHERE failed = 1 AND created_at < ? LIMIT ?)');
  const fileTotals = db.prepare('SELECT count(*) AS files, IFNULL(sum(size), 0) AS bytes FROM archive_files');
  const jobTotals = db.prepare('SELECT IFNULL(sum(failed = 0), 0) AS queued, IFNULL(sum(failed = 1), 0) AS failed FROM archive_jobs');
  const setDays = db.prepare(
    'INSERT INTO token_archive (token_id, keep_days) VALUES (?, ?) ON CONFLICT (token_id) DO UPDATE SET keep_days = excluded.keep_days',
  );
  const clearDays = db.prepare('DELETE FROM token_archive WHERE token_id = ?');
  const daysOf = db.prepare('SELECT keep_days FROM token_archive WHERE token_id = ?');
  return {
    async setArchiveOn(yes) {
      await write(() => (yes ? on : off).run());
    },
    async queueArchiveJobs(jobs) {
      if (jobs.length === 0) return;
      await write(() => {
        for (const j of jobs) queue.run(j.id, j.kind, j.tokenId, j.route, j.createdAt, j.createdAt);
      });
    },
    claimArchiveJobs(owner, now, until, limit) {
      return write(() => (claim.all(owner, until, now, now, limit) as ArchiveJobRow[]).map(toArchiveJob).sort((a, b) => a.dueAt - b.dueAt));
    },
    renewArchiveLeases(owner, ids, until) {
      if (ids.length === 0) return Promise.resolve([]);
      return write(() => (renew.all(until, JSON.stringify(ids), owner) as { id: string }[]).map((r) => r.id));
    },
    async putArchivedFile(f) {
      await write(() => putFile.run(f.owner, f.index, f.key, f.size, f.contentType, f.archivedAt, f.expiresAt));
    },
    finishArchiveJob(id, owner) {
      return write(() => finish.run(id, owner).changes === 1);
    },
    retryArchiveJob(id, owner, dueAt, error, failed) {
      return write(() => retry.run(error.slice(0, 500), dueAt, failed ? 1 : 0, id, owner).changes === 1);
    },
    async getArchiveJob(id) {
      const row = jobById.get(id) as ArchiveJobRow | undefined;
      return row ? toArchiveJob(row) : null;
    },
    async getArchivedFiles(owner) {
      return (filesOf.all(owner) as ArchivedFileRow[]).map(toArchivedFile);
    },
    async getArchivedFile(owner, index, now) {
      const row = fileAt.get(owner, index, now) as ArchivedFileRow | undefined;
      return row ? toArchivedFile(row) : null;
    },
    async expiredArchivedFiles(now, limit) {
      return (expired.all(now, limit) as ArchivedFileRow[]).map(toArchivedFile);
    },
    async deleteArchivedFiles(files) {
      if (files.length === 0) return;
      await write(() => {
        for (const f of files) deleteFile.run(f.owner, f.index);
      });
    },
    deleteFailedArchiveJobs(before, limit) {
      return write(() => deleteFailed.run(before, limit).changes);
    },
    async archiveTotals() {
      const f = fileTotals.get() as { files: number; bytes: number };
      const j = jobTotals.get() as { queued: number; failed: number };
      return { files: Number(f.files), bytes: Number(f.bytes), queued: Number(j.queued), failed: Number(j.failed) };
    },
    async setTokenArchiveDays(tokenId, days) {
      await write(() => (days === null ? clearDays.run(tokenId) : setDays.run(tokenId, days)));
    },
    async getTokenArchiveDays(tokenId) {
      const row = daysOf.get(tokenId) as { keep_days: number } | undefined;
      return row ? Number(row.keep_days) : null;
    },
  };
}

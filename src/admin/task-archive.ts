import type { Store } from '../store/store.js';

/** What the archive holds of a task (docs/archive.md), for `GET /admin/tasks/{task_id}` and the console. */
export interface AdminTaskArchive {
  /** Its archived files, by result index (expired ones until the purge deletes them). */
  readonly files: { index: number; size: number; content_type: string | null; archived_at: number; expires_at: number }[];
  /** Its copy job while one is due, under way or given up on; null otherwise (done, or none was queued). */
  readonly job: { attempts: number; due_at: number; last_error: string | null; failed: boolean } | null;
}

/** The task's archived files and copy job. */
export async function taskArchive(store: Store, id: string): Promise<AdminTaskArchive> {
  const [files, job] = await Promise.all([store.getArchivedFiles(id), store.getArchiveJob(id)]);
  return {
    files: files.map((f) => ({ index: f.index, size: f.size, content_type: f.contentType, archived_at: f.archivedAt, expires_at: f.expiresAt })),
    job: job && { attempts: job.attempts, due_at: job.dueAt, last_error: job.lastError, failed: job.failed },
  };
}

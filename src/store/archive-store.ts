/**
 * The result archive's records (docs/archive.md): the copies due (one job per completed task with
 * files, or per link of a route that archives), leased to one replica at a time like tasks are;
 * the files copied, with how long each is kept; and the retention a token was given.
 *
 * A task's job is written by the store itself in the transaction that completes the task (a
 * trigger on `tasks`, while `setArchiveOn(true)` says an archive is configured), so no crash
 * between the completion and the queueing can lose a copy, and the poller does nothing more.
 */

/** What a job copies: a task's result files, or the file behind a link. */
export type ArchiveJobKind = 'task' | 'link';

/** A copy due (or given up on). */
export interface ArchiveJob {
  /** The task id, or the link id. */
  readonly id: string;
  readonly kind: ArchiveJobKind;
  readonly tokenId: string;
  /** The route that made it: its `archive.keep_days` says how long the files are kept. */
  readonly route: string;
  /** Unix milliseconds: when it was queued, and when it is next tried. */
  readonly createdAt: number;
  readonly dueAt: number;
  /** Attempts that failed so far, and why the last one did. */
  readonly attempts: number;
  readonly lastError: string | null;
  /** True once given up on (GATEWAY_ARCHIVE_ATTEMPTS failed attempts, or a file that can never be copied). */
  readonly failed: boolean;
}

/** A job to queue (links: the sync route queues them as it hands them out). */
export type NewArchiveJob = Pick<ArchiveJob, 'id' | 'kind' | 'tokenId' | 'route' | 'createdAt'>;

/** A file in the archive. */
export interface ArchivedFile {
  /** The task id (`index` is the result's), or the link id (`index` 0). */
  readonly owner: string;
  readonly index: number;
  /** Where the backend keeps it (src/archive/backend.ts). */
  readonly key: string;
  readonly size: number;
  /** The media type the vendor served it with; null: none said (served as bytes). */
  readonly contentType: string | null;
  /** Unix milliseconds: when the copy was done, and when the daily purge deletes it. */
  readonly archivedAt: number;
  readonly expiresAt: number;
}

/** How much the archive holds, and how much is left to do. */
export interface ArchiveTotals {
  readonly files: number;
  readonly bytes: number;
  /** Jobs due or under way, and jobs given up on. */
  readonly queued: number;
  readonly failed: number;
}

/** The archive's part of the store. */
export interface ArchiveStore {
  /** Whether completed tasks queue a copy from now on (an archive is configured); every replica says so at start. */
  setArchiveOn(on: boolean): Promise<void>;
  /** Queues jobs (a job already there is left as it is). */
  queueArchiveJobs(jobs: readonly NewArchiveJob[]): Promise<void>;
  /**
   * Takes up to `limit` jobs not given up on, due at or before `now`, whose lease is free or ran
   * out, oldest due first, and leases them to `owner` until `until`; two calls never take the same.
   */
  claimArchiveJobs(owner: string, now: number, until: number, limit: number): Promise<ArchiveJob[]>;
  /** Extends `owner`'s leases of those jobs to `until`; returns the ids it still held. */
  renewArchiveLeases(owner: string, ids: readonly string[], until: number): Promise<string[]>;
  /** Records a file copied (one of the same owner and index is replaced). */
  putArchivedFile(file: ArchivedFile): Promise<void>;
  /** Deletes a job `owner` holds (every file is copied, or there was none to copy); false when it holds it no more. */
  finishArchiveJob(id: string, owner: string): Promise<boolean>;
  /**
   * A failed attempt of a job `owner` holds: counts it, keeps the error, lets the lease go, and
   * makes it due at `dueAt` (or gives it up, `failed`); false when `owner` holds it no more.
   */
  retryArchiveJob(id: string, owner: string, dueAt: number, error: string, failed: boolean): Promise<boolean>;
  /** A job by id (GET /admin/tasks/{id}); null when none is due (done, or never queued). */
  getArchiveJob(id: string): Promise<ArchiveJob | null>;
  /** The files of an owner, by index, expired ones included (the admin view). */
  getArchivedFiles(owner: string): Promise<ArchivedFile[]>;
  /** One file while it is kept (expires after `now`); null otherwise. */
  getArchivedFile(owner: string, index: number, now: number): Promise<ArchivedFile | null>;
  /** Up to `limit` files expired at `now`, oldest expiry first (the purge deletes them from the backend, then here). */
  expiredArchivedFiles(now: number, limit: number): Promise<ArchivedFile[]>;
  /** Deletes the records of those files. */
  deleteArchivedFiles(files: readonly Pick<ArchivedFile, 'owner' | 'index'>[]): Promise<void>;
  /** Deletes up to `limit` jobs given up on before `before`; returns how many. */
  deleteFailedArchiveJobs(before: number, limit: number): Promise<number>;
  archiveTotals(): Promise<ArchiveTotals>;
  /** A token's retention in days (its archive.keep_days); null: the route's or the default. */
  setTokenArchiveDays(tokenId: string, days: number | null): Promise<void>;
  getTokenArchiveDays(tokenId: string): Promise<number | null>;
}

/** A row of `archive_jobs`, as both drivers read it. */
export interface ArchiveJobRow {
  id: string;
  kind: string;
  token_id: string;
  route: string;
  created_at: number | string;
  due_at: number | string;
  attempts: number | string;
  last_error: string | null;
  failed: number | string;
}

/** A row of `archive_files`, as both drivers read it. */
export interface ArchivedFileRow {
  owner: string;
  idx: number | string;
  key: string;
  size: number | string;
  content_type: string | null;
  archived_at: number | string;
  expires_at: number | string;
}

/** A job from its row. */
export function toArchiveJob(r: ArchiveJobRow): ArchiveJob {
  return {
    id: r.id,
    kind: r.kind === 'link' ? 'link' : 'task',
    tokenId: r.token_id,
    route: r.route,
    createdAt: Number(r.created_at),
    dueAt: Number(r.due_at),
    attempts: Number(r.attempts),
    lastError: r.last_error,
    failed: Number(r.failed) === 1,
  };
}

/** A file from its row. */
export function toArchivedFile(r: ArchivedFileRow): ArchivedFile {
  return {
    owner: r.owner,
    index: Number(r.idx),
    key: r.key,
    size: Number(r.size),
    contentType: r.content_type,
    archivedAt: Number(r.archived_at),
    expiresAt: Number(r.expires_at),
  };
}

import { h, section, table, when } from './dom.js';

/** What `GET /admin/tasks/{task_id}` says of the task in the result archive (docs/archive.md). */
export interface TaskArchive {
  files: { index: number; size: number; content_type: string | null; archived_at: number; expires_at: number }[];
  job: { attempts: number; due_at: number; last_error: string | null; failed: boolean } | null;
}

/** A size in bytes as a person reads it. */
function bytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** The task page's "Archive" section: its archived files, and its copy while one is due or was given up on. */
export function archiveSection(a: TaskArchive | undefined): HTMLElement | null {
  if (!a) return null;
  const job = a.job;
  return section(
    'Archive',
    table(
      [
        { label: 'result', cell: (f: TaskArchive['files'][number]) => String(f.index), numeric: true },
        { label: 'size', cell: (f) => bytes(f.size), numeric: true },
        { label: 'type', cell: (f) => f.content_type ?? '—' },
        { label: 'copied', cell: (f) => when(f.archived_at) },
        { label: 'kept until', cell: (f) => when(f.expires_at) },
      ],
      a.files,
      { empty: job ? 'No file copied yet.' : 'Not archived: its downloads are asked of the vendor.', testid: 'archive-files' },
    ),
    job
      ? h(
          'p',
          { class: job.failed ? 'notice error' : 'notice', 'data-testid': 'archive-job' },
          job.failed
            ? `Copy given up after ${job.attempts} attempt(s): ${job.last_error ?? ''}`
            : `Copy due ${when(job.due_at)}${job.attempts > 0 ? ` (attempt ${job.attempts + 1}; last: ${job.last_error ?? ''})` : ''}`,
        )
      : null,
  );
}

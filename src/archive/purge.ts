import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { ArchiveBackend } from './backend.js';
import { DAY_MS } from './retention.js';

const PAGE = 200;
/** Jobs given up on stay visible this long (GET /admin/tasks/{id}), then go. */
const FAILED_KEPT_MS = 30 * DAY_MS;

/**
 * Deletes the files whose retention ran out: from the backend first, then their records, a page at
 * a time. Replicas may purge at once: each deletion is one that may run twice, and a download that
 * finds its file gone meanwhile asks the vendor instead. Also drops jobs given up on long ago and
 * (a directory) files a crash left half written. Resolves with how many files went.
 */
export async function purgeArchive(store: Store, backend: ArchiveBackend, now: number, log: Logger): Promise<number> {
  let n = 0;
  for (;;) {
    const files = await store.expiredArchivedFiles(now, PAGE);
    for (const f of files) await backend.delete(f.key);
    await store.deleteArchivedFiles(files);
    n += files.length;
    if (files.length < PAGE) break;
  }
  await store.deleteFailedArchiveJobs(now - FAILED_KEPT_MS, 1_000);
  const sweep = (backend as { sweepTemp?: (now: number) => Promise<number> }).sweepTemp;
  const left = sweep ? await sweep(now) : 0;
  if (n > 0 || left > 0) log.info({ files: n, half_written: left }, 'purged archived files past their retention');
  return n;
}

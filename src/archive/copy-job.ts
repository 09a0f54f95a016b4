import { pipeline, Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import { requestIds } from '../http/request-id.js';
import { signFor } from '../pipeline/call-upstream.js';
import { refreshResults, requestFor } from '../operations/download.js';
import { fetchVendorFile, GONE } from '../operations/vendor-file.js';
import type { ArchiveJob, Store, TaskRecord, TaskResult } from '../store/store.js';
import { discard } from '../upstream/dispatch.js';
import type { Pools } from '../upstream/pools.js';
import type { UpstreamRequest } from '../upstream/upstream-request.js';
import { addCallerHeaders } from '../upstream/trace-headers.js';
import { type ArchiveBackend, ArchiveTooLarge, linkFileKey, taskFileKey } from './backend.js';
import { DAY_MS, keepDaysFor } from './retention.js';

/** What copying a job's files needs. */
export interface CopyDeps {
  readonly store: Store;
  readonly backend: ArchiveBackend;
  readonly pools: Pools;
  readonly snapshot: () => Snapshot;
  /** The channel definition a task is followed with (the poller's). */
  readonly channelFor: (task: TaskRecord) => CompiledChannel | undefined;
  readonly now: () => number;
  /** GATEWAY_ARCHIVE_KEEP_DAYS and GATEWAY_ARCHIVE_MAX_MB (in bytes). */
  readonly keepDays: number;
  readonly maxBytes: number;
}

/** A copy that will never succeed (a file over the bound): the job is given up at once, not retried. */
export class CopyRefused extends Error {}

/** What a copy tells its watcher (the copier): while a file streams into the archive, and each time bytes move. */
export interface CopyProgress {
  /** A file starts (true) or ends (false) streaming from the vendor into the archive. */
  streaming(on: boolean): void;
  /** Bytes moved (read from the vendor, taken by the archive as fast as it writes). */
  moved(): void;
}

const NO_WATCH: CopyProgress = { streaming: () => undefined, moved: () => undefined };

/** A media type fit for a header, as the vendor named it (parameters kept); else none. */
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}(\s*;\s*[A-Za-z0-9_.+-]{1,40}=[A-Za-z0-9_.+"-]{1,80}){0,3}$/;

/**
 * Copies the files of one job into the archive, each at most once (a file copied by an earlier
 * attempt is not fetched again): a task's result files, fetched as its download route fetches them
 * (the profile's content mapping, the channel's credentials to its own origin only, redirects
 * followed here), or the vendor URL behind a link. The vendor's bytes are streamed into the
 * backend, never held. Resolves with the number of files copied; throws when one could not be
 * (CopyRefused when it never can).
 */
export async function copyJob(job: ArchiveJob, deps: CopyDeps, signal: AbortSignal, progress: CopyProgress = NO_WATCH): Promise<number> {
  const snapshot = deps.snapshot();
  const route = snapshot.routes.find((r) => r.id === job.route);
  const days = keepDaysFor(job.kind, route, await deps.store.getTokenArchiveDays(job.tokenId), deps.keepDays);
  if (days === 0) return 0;
  const done = new Set((await deps.store.getArchivedFiles(job.id)).map((f) => f.index));
  if (job.kind === 'link') {
    if (done.has(0)) return 0;
    const link = await deps.store.getLink(job.id, deps.now());
    // Expired, or its token deleted: nothing to keep.
    if (!link?.url) return 0;
    const channel = snapshot.channelsByName.get(link.channel);
    if (!channel) throw new Error(`channel ${link.channel} is no longer configured`);
    const ids = requestIds({});
    const req: UpstreamRequest = { method: 'GET', path: link.url, query: {}, headers: {}, body: null };
    addCallerHeaders(req, ids);
    const signed = signFor(channel, req, new Date(deps.now()));
    const answer = await fetchVendorFile(deps.pools, channel, { req, signed }, ids, null, signal);
    await store(deps, answer, { owner: job.id, index: 0, key: linkFileKey(job.id) }, days, signal, progress);
    return 1;
  }
  const task = await deps.store.getTask(job.id);
  // Deleted by its client meanwhile: nothing to keep.
  if (task?.status !== 'completed') return 0;
  const channel = deps.channelFor(task);
  if (!channel) throw new Error(`channel ${task.channel} is no longer configured`);
  let copied = 0;
  let current = task;
  for (const [index, result] of task.results.entries()) {
    if (result.url === null || done.has(index)) continue;
    const ids = { ...requestIds({}), now: new Date(deps.now()) };
    let answer = await fetchVendorFile(
      deps.pools,
      channel,
      await requestFor(ids, channel, current, result as TaskResult & { url: string }, index),
      ids,
      null,
      signal,
    );
    // An expired result URL (two-step vendors sign theirs for a while): look the files up again, once, as a download does.
    const protocol = channel.profile.tasks;
    if (GONE.has(answer.statusCode) && protocol?.result) {
      const fresh = await refreshResults(ids, deps, channel, protocol, current);
      const again = fresh?.results[index];
      if (fresh && again?.url) {
        discard(answer.body);
        current = fresh;
        answer = await fetchVendorFile(
          deps.pools,
          channel,
          await requestFor(ids, channel, fresh, again as TaskResult & { url: string }, index),
          ids,
          null,
          signal,
        );
      }
    }
    await store(deps, answer, { owner: task.id, index, key: taskFileKey(task.id, index) }, days, signal, progress);
    copied++;
  }
  return copied;
}

/** Streams one vendor answer into the backend and records the file. */
async function store(
  deps: CopyDeps,
  answer: Dispatcher.ResponseData,
  at: { owner: string; index: number; key: string },
  days: number,
  signal: AbortSignal,
  progress: CopyProgress,
): Promise<void> {
  if (answer.statusCode !== 200) {
    discard(answer.body);
    throw new Error(`the vendor answered the copy with HTTP ${answer.statusCode}`);
  }
  const length = Number(answer.headers['content-length']);
  if (Number.isFinite(length) && length > deps.maxBytes) {
    discard(answer.body);
    throw new CopyRefused(new ArchiveTooLarge(deps.maxBytes).message);
  }
  const type = answer.headers['content-type'];
  const contentType = typeof type === 'string' && MEDIA_TYPE.test(type.trim()) ? type.trim() : null;
  // The bytes are counted as they pass (read only as fast as the archive takes them): a copy in
  // which nothing moves (a hung archive, a vendor gone silent) is seen by the copier and cut.
  const counted = new Transform({
    transform(chunk, _encoding, done) {
      progress.moved();
      done(null, chunk);
    },
  });
  pipeline(answer.body, counted, () => undefined);
  let size: number;
  progress.streaming(true);
  try {
    ({ size } = await deps.backend.put(at.key, counted, { contentType, maxBytes: deps.maxBytes, signal }));
  } catch (err) {
    // The vendor's connection is let go at once, not held until its body timeout.
    answer.body.destroy();
    counted.destroy();
    if (err instanceof ArchiveTooLarge) throw new CopyRefused(err.message);
    throw err;
  } finally {
    progress.streaming(false);
  }
  const now = deps.now();
  await deps.store.putArchivedFile({ ...at, size, contentType, archivedAt: now, expiresAt: now + days * DAY_MS });
}

import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, open, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ArchiveBackend, ArchiveMissing, type ByteRange, checkKey, type PutOptions } from './backend.js';
import { ByteLimit } from './byte-limit.js';

/** Where files being written wait: inside the root, so the rename that publishes one is atomic. */
const TEMP = '.incoming';
/** A file being written that is older than this was left by a crash: `sweepTemp` deletes it. */
const TEMP_STALE_MS = 24 * 3_600_000;

/**
 * The archive in a directory (a local disk or a volume the replicas share). A file is written under
 * a temporary name, flushed to disk (fsync), then renamed into place, so a reader finds the whole
 * file or none; paths come from the key alone (checked), never from vendor data.
 */
export function dirBackend(root: string): ArchiveBackend & { sweepTemp(now: number): Promise<number> } {
  const pathOf = (key: string) => join(root, ...checkKey(key).split('/'));
  const temp = join(root, TEMP);
  return {
    kind: 'dir',
    where: root,
    async put(key: string, body: Readable, opts: PutOptions) {
      const final = pathOf(key);
      await mkdir(temp, { recursive: true });
      const part = join(temp, `${key.replaceAll('/', '_')}.${randomBytes(6).toString('hex')}`);
      const limit = new ByteLimit(opts.maxBytes);
      try {
        await pipeline(body, limit, createWriteStream(part, { flags: 'wx' }), { signal: opts.signal });
        const fh = await open(part, 'r+');
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
        await mkdir(dirname(final), { recursive: true });
        await rename(part, final);
      } catch (err) {
        await rm(part, { force: true });
        throw err;
      }
      // The rename is durable once the directory is flushed too.
      await syncDir(dirname(final));
      return { size: limit.seen };
    },
    async get(key: string, range: ByteRange | null) {
      const path = pathOf(key);
      const fh = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'ENOENT' ? new ArchiveMissing(key) : err;
      });
      // The stream owns the handle: a file purged while it is read is still read whole.
      return createReadStream('', { fd: fh, ...(range ? { start: range.start, end: range.end } : {}), highWaterMark: 64 * 1024 });
    },
    async stat(key: string) {
      try {
        return { size: (await stat(pathOf(key))).size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async delete(key: string) {
      const path = pathOf(key);
      await unlink(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      // A task's folder goes with its last file; one still in use stays (ENOTEMPTY).
      await rmdir(dirname(path)).catch(() => undefined);
    },
    async probe() {
      // The root is made by the first copy: not there yet is no outage; an unreadable one (a volume gone) is.
      await access(root).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    },
    async close() {},
    /** Deletes files a crash left half written; returns how many. */
    async sweepTemp(now: number) {
      let n = 0;
      for (const name of await readdir(temp).catch(() => [] as string[])) {
        const path = join(temp, name);
        const s = await stat(path).catch(() => null);
        if (s && now - s.mtimeMs > TEMP_STALE_MS) {
          await rm(path, { force: true });
          n++;
        }
      }
      return n;
    },
  };
}

/** Flushes a directory's entries (a rename into it) to disk; a platform that cannot is let be. */
async function syncDir(path: string): Promise<void> {
  const fh = await open(path, 'r').catch(() => null);
  if (!fh) return;
  try {
    await fh.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is as durable as they make it.
  } finally {
    await fh.close();
  }
}

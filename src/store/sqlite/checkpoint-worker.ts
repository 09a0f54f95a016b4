/**
 * The checkpointer's thread (src/store/sqlite/checkpointer.ts): its own connection to the store's
 * file, copying the WAL's committed pages into the database file every `intervalMs`, so the
 * copy and its fsync never run on the event loop that serves requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'libsql';

interface Checkpointed {
  /** Frames in the WAL, and how many of them are now in the database file (both -1 when the file is not in WAL mode). */
  readonly log: number;
  readonly checkpointed: number;
}

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const port = workerPort();

function workerPort(): NonNullable<typeof parentPort> {
  if (!parentPort) throw new Error('the checkpointer runs on a worker thread');
  return parentPort;
}
const db = new Database(path);
// PASSIVE never waits for a lock and never blocks a writer: what a writer is appending is copied next time.
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

function run(): void {
  try {
    // A few rounds while the writer keeps adding frames: the WAL starts over from its beginning
    // only when a write begins after a checkpoint that left nothing behind.
    for (let round = 0; round < 4; round++) {
      const r = checkpoint.get() as Checkpointed;
      port.postMessage(r);
      if (r.log <= r.checkpointed) break;
    }
  } catch {
    // A failed round (the file busy at the moment) is retried on the next tick; the writer's
    // own automatic checkpoint, set far higher, is the backstop.
  }
}

const timer = setInterval(run, intervalMs);
port.on('message', (m: string) => {
  if (m === 'now') run();
  if (m === 'close') {
    clearInterval(timer);
    db.close();
    port.close();
  }
});

import { Worker } from 'node:worker_threads';

/**
 * Checkpoints of the embedded store's WAL, off the event loop. SQLite's automatic checkpoint runs
 * inside the commit that crosses its threshold, on the thread that commits: with libsql that is
 * the event loop, and copying thousands of pages with an fsync held every request in flight for
 * 35-45 ms about once every few seconds (the paced p99 of bench/overhead, issue #14). Here a
 * worker thread with its own connection copies the WAL into the database file; the writer's own
 * automatic checkpoint stays as a backstop at `BACKSTOP_PAGES`, reached only if the worker fell
 * behind. A commit can still wait on a lock the checkpoint holds while it syncs the file (measured:
 * a commit of 4–18 ms about once a second under load); every 250 ms made that a 9 ms wait four
 * times a second, so once a second it is.
 */
export interface Checkpointer {
  /** Asks for a checkpoint now (tests); the worker runs one every interval (1 s) anyway. */
  now(): void;
  /** Resolves after each checkpoint round with the WAL's frame counts (tests). */
  onRound(listener: (round: { log: number; checkpointed: number }) => void): void;
  /** Stops the worker and closes its connection; resolves once it has exited. */
  close(): Promise<void>;
}

/** The writer's automatic checkpoint threshold while a checkpointer runs: a backstop, not the rule. */
export const BACKSTOP_PAGES = 50_000;

/** Starts the checkpointer of the database file at `path` (already in WAL mode). */
export function startCheckpointer(path: string, intervalMs = 1_000): Checkpointer {
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData: { path, intervalMs } });
  // Never what keeps a process alive (a CLI command, a test).
  worker.unref();
  const listeners: ((round: { log: number; checkpointed: number }) => void)[] = [];
  worker.on('message', (round: { log: number; checkpointed: number }) => {
    for (const l of listeners) l(round);
  });
  // A worker that dies (it should not) leaves the backstop; the store keeps working.
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    now: () => worker.postMessage('now'),
    onRound: (l) => void listeners.push(l),
    async close() {
      // Held until its connection is closed: the caller's next step may be to remove the file.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}

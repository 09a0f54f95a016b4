import type { LedgerEntry } from '../store.js';
import type { Db } from './database.js';

/**
 * Group commit: writes that arrive in the same turn of the event loop run as one transaction.
 * Each stays an atomic step with its own answer, and each promise resolves only after the
 * commit, but a burst pays for one commit instead of one per request.
 */
export interface GroupCommit {
  /** Runs `run` inside the next transaction; resolves with its answer once that committed. */
  write<T>(run: () => T): Promise<T>;
  /** Notes a ledger row written by the running step; listeners hear of it once its transaction committed. */
  wrote(entry: LedgerEntry): void;
  onLedger(listener: (entry: LedgerEntry) => void): () => void;
  /** Commits what is queued now (at close). */
  flush(): void;
}

/** `afterCommit` is called after each transaction that committed (the store starts its checkpointer on the first). */
export function groupCommit(db: Db, afterCommit: () => void = () => undefined): GroupCommit {
  // Prepared once: exec() would parse BEGIN and COMMIT again on every flush.
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  type Write = { run: () => unknown; resolve: (out: unknown) => void; reject: (e: unknown) => void };
  let queue: Write[] = [];
  // Ledger rows of the transaction being written.
  let written: LedgerEntry[] = [];
  const listeners = new Set<(entry: LedgerEntry) => void>();

  const tell = (rows: LedgerEntry[]) => {
    for (const row of rows) {
      for (const l of listeners) {
        try {
          l(row);
        } catch {
          // A listener (metrics) must never fail the writes it hears about.
        }
      }
    }
  };
  const flush = () => {
    const batch = queue;
    queue = [];
    written = [];
    const results: unknown[] = [];
    try {
      begin.run();
      try {
        for (const w of batch) results.push(w.run());
        commit.run();
      } catch (err) {
        rollback.run();
        throw err;
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    afterCommit();
    const rows = written;
    written = [];
    tell(rows);
    batch.forEach((w, i) => w.resolve(results[i]!));
  };

  return {
    write: <T>(run: () => T) =>
      new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ run, resolve: resolve as (out: unknown) => void, reject });
      }),
    wrote: (entry) => void written.push(entry),
    onLedger(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    flush: () => {
      if (queue.length > 0) flush();
    },
  };
}

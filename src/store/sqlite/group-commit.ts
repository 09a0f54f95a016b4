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
  /**
   * Runs `run` at once, as one atomic step of this turn's transaction (opened now if need be), and
   * answers without waiting for the commit, which comes at the end of the turn with the others.
   * For a step whose answer matters now and whose durability can follow: a hold, which must be
   * exact against concurrent requests (one connection, so it is) but need only be durable before
   * its settlement, and the settlement is a `write`. Should the turn's transaction fail (a step that
   * throws fails it, with the writes queued in the same turn), the step is undone with it, and
   * what follows finds nothing recorded (src/quota/account.ts: a settlement then charges, a refund
   * gives nothing back).
   */
  now<T>(run: () => T): T;
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
  // Whether this turn's transaction is open (a `now` step opened it before the flush).
  let open = false;
  // A `now` step failed part way: the turn's transaction is rolled back whole, as a failing `write` rolls back its batch.
  let failed: unknown = null;
  let scheduled = false;
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
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  const flush = () => {
    scheduled = false;
    // Already committed by an early flush (close, a token's deletion) in this turn.
    if (queue.length === 0 && !open) return;
    const batch = queue;
    queue = [];
    const results: unknown[] = [];
    try {
      if (!open) begin.run();
      open = true;
      try {
        if (failed !== null) throw failed;
        for (const w of batch) results.push(w.run());
        commit.run();
        open = false;
      } catch (err) {
        rollback.run();
        open = false;
        throw err;
      }
    } catch (err) {
      failed = null;
      written = [];
      for (const w of batch) w.reject(err);
      return;
    }
    afterCommit();
    const rows = written;
    written = [];
    tell(rows);
    batch.forEach((w, i) => {
      w.resolve(results[i]);
    });
  };

  return {
    write: <T>(run: () => T) =>
      new Promise<T>((resolve, reject) => {
        queue.push({ run, resolve: resolve as (out: unknown) => void, reject });
        schedule();
      }),
    now<T>(run: () => T): T {
      if (!open) {
        begin.run();
        open = true;
      }
      schedule();
      try {
        return run();
      } catch (err) {
        // No savepoint per step (two more statements on every hold: measured +6 µs a request):
        // a step that fails part way fails the turn's transaction instead.
        failed ??= err;
        throw err;
      }
    },
    wrote: (entry) => void written.push(entry),
    onLedger(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    flush: () => {
      if (queue.length > 0 || open) flush();
    },
  };
}

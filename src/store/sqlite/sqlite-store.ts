import { alwaysAvailable, type Store } from '../store.js';
import { archiveMethods } from './archive.js';
import { auditMethods } from './audit.js';
import { startCheckpointer, type Checkpointer } from './checkpointer.js';
import { openDatabase } from './database.js';
import { groupCommit } from './group-commit.js';
import { ledgerWrites } from './ledger-writes.js';
import { linkMethods } from './links.js';
import { operatorTaskMethods } from './operator-tasks.js';
import { ownTaskMethods } from './own-tasks.js';
import { quotaMethods } from './quota.js';
import { requestLogMethods } from './request-log.js';
import { resourceMethods } from './resources.js';
import { taskMethods } from './tasks.js';
import { namedUniquely } from '../token-key-store.js';
import { isNameConflict, tokenKeyMethods } from './token-keys.js';
import { tokenMethods } from './tokens.js';
import { usageMethods } from './usage.js';
import { webhookMethods } from './webhooks.js';

/**
 * The embedded store: SQLite through libsql, in a file or (`:memory:`) in memory for tests. Its
 * writes go through one group commit, so a burst of requests pays for one transaction; a file's
 * WAL is checkpointed by a worker thread, off the event loop. `clock` is the time budgets count
 * periods by and the ledger's rows are stamped with (tests move it).
 */
export function openSqliteStore(path: string, clock: () => number = () => Date.now()): Store {
  const db = openDatabase(path);
  // Started by the first commit that changed a row: a store only read (a CLI listing) or an idle
  // gateway (whose background claims and sweeps commit every second, changing nothing) has no WAL
  // to copy, and the thread's own V8 costs about 8.5 MB of an idle gateway's RSS.
  let checkpointer: Checkpointer | null = null;
  const changes = db.prepare('SELECT total_changes() AS n');
  // The migrations ran before this: their changes are not the store's.
  const changedAtOpen = (changes.get() as { n: number }).n;
  const commits = groupCommit(db, () => {
    if (checkpointer === null && path !== ':memory:' && (changes.get() as { n: number }).n > changedAtOpen) checkpointer = startCheckpointer(path);
  });
  const money = ledgerWrites(db, commits, clock);
  const ping = async () => {
    db.prepare('SELECT 1').get();
  };
  return {
    ...namedUniquely(tokenMethods(db, commits, clock), isNameConflict),
    ...tokenKeyMethods(db, commits),
    ...quotaMethods(db, commits, money),
    ...taskMethods(db, commits, money, clock),
    ...ownTaskMethods(db, commits),
    ...operatorTaskMethods(db),
    ...resourceMethods(db, commits),
    ...linkMethods(db, commits),
    ...usageMethods(db),
    ...requestLogMethods(db, commits),
    ...auditMethods(db, commits),
    ...webhookMethods(db, commits),
    ...archiveMethods(db, commits),
    onLedger: commits.onLedger,
    ping,
    availability: alwaysAvailable(ping),
    async close() {
      commits.flush();
      await checkpointer?.close();
      db.close();
    },
  };
}

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { BACKSTOP_PAGES } from './checkpointer.js';
import { MIGRATIONS } from './migrations.js';

/** A libsql connection; the store's pieces prepare their statements on it. */
export type Db = Database.Database;

/**
 * Opens (creating if needed) the SQLite file at `path`, or a database in memory, and brings its
 * schema up to date. A file it makes is its owner's alone (0600, in a directory made 0700): it holds
 * the key hashes and the ledger. SQLite gives the -wal and -shm files the database file's mode.
 */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // `a`: made if absent with this mode, an existing file (and its mode) left as it is.
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new Database(path);
  if (path !== ':memory:') {
    // WAL lets the CLI create tokens while a gateway runs on the same file.
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    // Checkpoints are the checkpointer's (./checkpointer.ts), off the event loop; the writer's
    // own, which would run inside a commit, is only the backstop. When the WAL starts over its file
    // is cut back to 16 MB.
    db.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    db.exec(`PRAGMA journal_size_limit = ${16 * 2 ** 20}`);
  }
  db.exec('PRAGMA busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const current = (db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null }).v ?? 0;
  for (const [v, migration] of MIGRATIONS.entries()) {
    if (v < current) continue;
    db.transaction(() => {
      db.exec(migration);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(v + 1);
    })();
  }
}

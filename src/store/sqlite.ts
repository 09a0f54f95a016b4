import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import type { NewToken, Store, TokenRecord } from './store.js';

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash TEXT NOT NULL UNIQUE,
     grp TEXT NOT NULL,
     models TEXT,
     quota INTEGER,
     used INTEGER NOT NULL DEFAULT 0,
     disabled INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL
   )`,
];

interface TokenRow {
  id: string;
  name: string;
  key_hash: string;
  grp: string;
  models: string | null;
  quota: number | null;
  used: number;
  disabled: number;
  created_at: number;
}

function toRecord(r: TokenRow): TokenRecord {
  return {
    id: r.id,
    name: r.name,
    keyHash: r.key_hash,
    group: r.grp,
    models: r.models === null ? null : (JSON.parse(r.models) as string[]),
    quota: r.quota,
    used: r.used,
    disabled: r.disabled !== 0,
    createdAt: r.created_at,
  };
}

/** The embedded store: SQLite through libsql, in a file or (`:memory:`) in memory for tests. */
export function openSqliteStore(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  if (path !== ':memory:') {
    // WAL lets the CLI create tokens while a gateway runs on the same file.
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    // A checkpoint runs inside the commit that triggers it, on the event loop (1-4 ms with its
    // fsync). Every 10,000 pages instead of 1,000 makes that stall ten times rarer; the WAL file
    // stays under ~40 MB.
    db.exec('PRAGMA wal_autocheckpoint = 10000');
  }
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const current = (db.prepare('SELECT MAX(version) AS v FROM schema_version').get() as { v: number | null }).v ?? 0;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(v + 1);
    })();
  }

  const insert = db.prepare(
    'INSERT INTO tokens (id, name, key_hash, grp, models, quota, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const byHash = db.prepare('SELECT * FROM tokens WHERE key_hash = ?');
  const byId = db.prepare('SELECT * FROM tokens WHERE id = ?');
  const all = db.prepare('SELECT * FROM tokens ORDER BY created_at');
  const delNamed = db.prepare('DELETE FROM tokens WHERE name = ?');
  const debit = db.prepare('UPDATE tokens SET used = used + ? WHERE id = ? AND (quota IS NULL OR used + ? <= quota)');
  const refund = db.prepare('UPDATE tokens SET used = MAX(0, used - ?) WHERE id = ?');

  // Prepared once: exec() would parse BEGIN and COMMIT again on every flush.
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');

  // Group commit: quota writes that arrive in the same turn of the event loop run as one
  // transaction. Each stays an atomic conditional UPDATE with its own answer, and each promise
  // resolves only after the commit, but a burst pays for one commit instead of one per request.
  type Write = { run: () => boolean; resolve: (ok: boolean) => void; reject: (e: unknown) => void };
  let queue: Write[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    const results: boolean[] = [];
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
    batch.forEach((w, i) => w.resolve(results[i]!));
  };
  const write = (run: () => boolean) =>
    new Promise<boolean>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ run, resolve, reject });
    });

  return {
    async createToken(t: NewToken) {
      const id = randomUUID();
      insert.run(id, t.name, t.keyHash, t.group, t.models === null ? null : JSON.stringify(t.models), t.quota, Date.now());
      return toRecord(byId.get(id) as TokenRow);
    },
    async findTokenByHash(keyHash) {
      const row = byHash.get(keyHash) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async listTokens() {
      return (all.all() as TokenRow[]).map(toRecord);
    },
    async deleteTokensNamed(name) {
      return delNamed.run(name).changes;
    },
    debit(tokenId, amount) {
      return write(() => debit.run(amount, tokenId, amount).changes === 1);
    },
    async refund(tokenId, amount) {
      await write(() => refund.run(amount, tokenId).changes === 1);
    },
    async close() {
      if (queue.length > 0) flush();
      db.close();
    },
  };
}

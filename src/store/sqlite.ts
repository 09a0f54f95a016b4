import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { newTaskRecord, type LedgerBalance, type LedgerEntry, type LedgerKind, type NewTask, type NewToken, type Store, type TaskPatch, type TaskRecord } from './store.js';
import { clampSettlement } from './money.js';
import { MIGRATIONS, PATCH_COLUMNS, toLedger, toRecord, toResource, toTask, type HoldRow, type LedgerRow, type ResourceRow, type TaskRow, type TokenRow } from './sqlite-schema.js';

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
  const ledgerPage = db.prepare('SELECT * FROM ledger WHERE token_id = ? AND id > ? ORDER BY id LIMIT ?');
  const ledgerSums = db.prepare('SELECT kind, SUM(amount) AS total FROM ledger WHERE token_id = ? GROUP BY kind');
  const all = db.prepare('SELECT * FROM tokens ORDER BY created_at');
  const delNamed = db.prepare('DELETE FROM tokens WHERE name = ?');
  const debit = db.prepare('UPDATE tokens SET used = used + ? WHERE id = ? AND (quota IS NULL OR used + ? <= quota)');
  // No clamp at 0: a refund beyond what was debited would be a bug, and the ledger must show it.
  const giveBackUnits = db.prepare('UPDATE tokens SET used = used - ? WHERE id = ?');
  const insertLedger = db.prepare('INSERT INTO ledger (token_id, kind, ref, model, amount, at) VALUES (?, ?, ?, ?, ?, ?)');
  const forceDebit = db.prepare('UPDATE tokens SET used = used + ? WHERE id = ?');
  const insertHold = db.prepare('INSERT INTO holds (ref, token_id, model, amount, expires_at) VALUES (?, ?, ?, ?, ?)');
  const holdByRef = db.prepare('SELECT * FROM holds WHERE ref = ?');
  const deleteHold = db.prepare('DELETE FROM holds WHERE ref = ?');
  const expiredHolds = db.prepare('SELECT * FROM holds WHERE expires_at <= ? ORDER BY expires_at LIMIT ?');
  const insertResource = db.prepare('INSERT OR IGNORE INTO resources (kind, id, token_id, channel, vendor_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const resourceById = db.prepare('SELECT * FROM resources WHERE kind = ? AND id = ?');

  // Prepared once: exec() would parse BEGIN and COMMIT again on every flush.
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, token_id, kind, route, model, upstream_model, channel, status, price, pricing, created_at, updated_at, deadline_at, version)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'submitting', ?, ?, ?, ?, ?, 1)`,
  );
  const taskById = db.prepare('SELECT * FROM tasks WHERE id = ?');
  const deleteTask = db.prepare('DELETE FROM tasks WHERE id = ? AND version = ?');
  const unfinished = db.prepare(
    "SELECT * FROM tasks WHERE status IN ('submitting', 'queued', 'in_progress') AND id > ? ORDER BY id LIMIT ?",
  );
  // One prepared UPDATE per set of patched fields: a poller writes the same few shapes again and again.
  const updates = new Map<string, ReturnType<typeof db.prepare>>();
  const updateFor = (keys: string[]) => {
    const sig = keys.join(',');
    let stmt = updates.get(sig);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][0]} = ?`);
      stmt = db.prepare(`UPDATE tasks SET ${[...sets, 'refunded = ?', 'charged = ?', 'version = version + 1'].join(', ')} WHERE id = ? AND version = ?`);
      updates.set(sig, stmt);
    }
    return stmt;
  };

  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');

  // Group commit: quota writes that arrive in the same turn of the event loop run as one
  // transaction. Each stays an atomic conditional UPDATE with its own answer, and each promise
  // resolves only after the commit, but a burst pays for one commit instead of one per request.
  type Write = { run: () => unknown; resolve: (out: unknown) => void; reject: (e: unknown) => void };
  let queue: Write[] = [];
  // Ledger rows of the transaction being written; listeners hear of them only once it committed.
  let written: LedgerEntry[] = [];
  const listeners = new Set<(entry: LedgerEntry) => void>();
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
    const rows = written;
    written = [];
    for (const row of rows) {
      for (const l of listeners) {
        try {
          l(row);
        } catch {
          // A listener (metrics) must never fail the writes it hears about.
        }
      }
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  };
  const write = <T>(run: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ run, resolve: resolve as (out: unknown) => void, reject });
    });

  // Every change of tokens.used goes through these two, inside a write, with its ledger row.
  const record = (tokenId: string, kind: LedgerKind, ref: string, model: string, amount: number) => {
    const at = Date.now();
    const id = Number(insertLedger.run(tokenId, kind, ref, model, amount, at).lastInsertRowid);
    written.push({ id, tokenId, kind, ref, model, amount, at });
  };
  const spend = (tokenId: string, amount: number, ref: string, model: string): boolean => {
    if (debit.run(amount, tokenId, amount).changes !== 1) return false;
    if (amount > 0) record(tokenId, 'debit', ref, model, amount);
    return true;
  };
  const giveBack = (tokenId: string, kind: 'refund' | 'settle', amount: number, ref: string, model: string) => {
    if (amount > 0 && giveBackUnits.run(amount, tokenId).changes === 1) record(tokenId, kind, ref, model, amount);
  };

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
    async getToken(id) {
      const row = byId.get(id) as TokenRow | undefined;
      return row ? toRecord(row) : null;
    },
    async deleteTokensNamed(name) {
      return delNamed.run(name).changes;
    },
    debit(tokenId, amount, entry) {
      return write(() => spend(tokenId, amount, entry.ref, entry.model));
    },
    async refund(tokenId, amount, entry) {
      await write(() => giveBack(tokenId, 'refund', amount, entry.ref, entry.model));
    },
    hold(tokenId, amount, entry) {
      return write(() => {
        if (!spend(tokenId, amount, entry.ref, entry.model)) return false;
        if (amount > 0) insertHold.run(entry.ref, tokenId, entry.model, amount, entry.expiresAt);
        return true;
      });
    },
    releaseHold(ref, refund) {
      return write(() => {
        const row = holdByRef.get(ref) as HoldRow | undefined;
        if (!row) return false;
        deleteHold.run(ref);
        if (refund) giveBack(row.token_id, 'refund', row.amount, ref, row.model);
        return true;
      });
    },
    expireHolds(now, limit) {
      return write(() =>
        (expiredHolds.all(now, limit) as HoldRow[]).map((row) => {
          deleteHold.run(row.ref);
          giveBack(row.token_id, 'refund', row.amount, row.ref, row.model);
          return { ref: row.ref, tokenId: row.token_id, model: row.model, amount: row.amount, expiresAt: row.expires_at };
        }),
      );
    },
    charge(tokenId, amount, entry) {
      return write(() => {
        if (amount > 0 && forceDebit.run(amount, tokenId).changes === 1) record(tokenId, 'debit', entry.ref, entry.model, amount);
      });
    },
    createTask(t: NewTask) {
      return write(() => {
        if (!spend(t.tokenId, t.price, t.id, t.model)) return null;
        const pricing = t.pricing ? JSON.stringify(t.pricing) : null;
        insertTask.run(t.id, t.tokenId, t.kind, t.route, t.model, t.upstreamModel, t.channel, t.price, pricing, t.createdAt, t.createdAt, t.deadlineAt);
        return newTaskRecord(t);
      });
    },
    async getTask(id) {
      const row = taskById.get(id) as TaskRow | undefined;
      return row ? toTask(row) : null;
    },
    async getTasks(ids) {
      const out: TaskRecord[] = [];
      for (const id of ids) {
        const row = taskById.get(id) as TaskRow | undefined;
        if (row) out.push(toTask(row));
      }
      return out;
    },
    updateTask(id, version, patch) {
      return write(() => {
        const row = taskById.get(id) as TaskRow | undefined;
        if (!row || row.version !== version) return null;
        const keys = Object.keys(patch).filter((k) => k !== 'refund' && k !== 'settle' && patch[k as keyof TaskPatch] !== undefined);
        const values = keys.map((k) => PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][1](patch[k as keyof TaskPatch]));
        // Refund and settlement ride on the same compare-and-set: only a task not yet refunded pays
        // out, once, and only one neither settled nor refunded settles. What goes back is never more
        // than what the task still holds.
        const refundNow = patch.refund === true && row.refunded === 0;
        const settleNow = !refundNow && patch.settle !== undefined && row.charged === null && row.refunded === 0;
        const held = row.charged ?? row.price;
        const charged = refundNow ? 0 : settleNow ? clampSettlement(patch.settle!, row.price) : row.charged;
        if (updateFor(keys).run([...values, row.refunded === 1 || refundNow ? 1 : 0, charged, id, version]).changes !== 1) return null;
        if (refundNow) giveBack(row.token_id, 'refund', held, id, row.model);
        if (settleNow) giveBack(row.token_id, 'settle', row.price - charged!, id, row.model);
        return toTask(taskById.get(id) as TaskRow);
      });
    },
    abortTask(id, version) {
      return write(() => {
        const row = taskById.get(id) as TaskRow | undefined;
        if (!row || row.version !== version) return false;
        deleteTask.run(id, version);
        if (row.refunded === 0) giveBack(row.token_id, 'refund', row.charged ?? row.price, id, row.model);
        return true;
      });
    },
    putResource(r) {
      return write(() => {
        if (insertResource.run(r.kind, r.id, r.tokenId, r.channel, r.vendorId, r.createdAt).changes === 1) return true;
        const had = resourceById.get(r.kind, r.id) as ResourceRow | undefined;
        return had !== undefined && had.token_id === r.tokenId && had.channel === r.channel;
      });
    },
    async getResources(kind, ids) {
      const out = [];
      for (const id of new Set(ids)) {
        const row = resourceById.get(kind, id) as ResourceRow | undefined;
        if (row) out.push(toResource(row));
      }
      return out;
    },
    async listUnfinishedTasks(after, limit) {
      return (unfinished.all(after ?? '', limit) as TaskRow[]).map(toTask);
    },
    async ledger(tokenId, after, limit) {
      const rows = ledgerPage.all(tokenId, after ?? 0, limit) as LedgerRow[];
      return rows.map(toLedger);
    },
    async ledgerBalance(tokenId) {
      // Two reads in one synchronous step: no write of this store can land between them.
      const token = byId.get(tokenId) as TokenRow | undefined;
      if (!token) return null;
      const balance: Record<LedgerKind, number> & { used: number } = { used: token.used, debit: 0, refund: 0, settle: 0 };
      for (const r of ledgerSums.all(tokenId) as { kind: LedgerKind; total: number }[]) if (r.kind in balance) balance[r.kind] = r.total;
      return balance as LedgerBalance;
    },
    onLedger(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async close() {
      if (queue.length > 0) flush();
      db.close();
    },
  };
}

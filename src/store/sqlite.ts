import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'libsql';
import { newTaskRecord, type NewTask, type NewToken, type Store, type TaskPatch, type TaskRecord, type TokenRecord } from './store.js';

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
  `CREATE TABLE tasks (
     id TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     route TEXT NOT NULL,
     model TEXT NOT NULL,
     upstream_model TEXT NOT NULL,
     channel TEXT NOT NULL,
     upstream_id TEXT,
     status TEXT NOT NULL,
     progress INTEGER NOT NULL DEFAULT 0,
     vendor_status TEXT,
     results TEXT NOT NULL DEFAULT '[]',
     error TEXT,
     context TEXT,
     seconds TEXT,
     size TEXT,
     price INTEGER NOT NULL,
     refunded INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     completed_at INTEGER,
     deadline_at INTEGER NOT NULL,
     version INTEGER NOT NULL
   );
   CREATE INDEX tasks_unfinished ON tasks (id) WHERE status IN ('submitting', 'queued', 'in_progress');`,
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

interface TaskRow {
  id: string;
  token_id: string;
  kind: string;
  route: string;
  model: string;
  upstream_model: string;
  channel: string;
  upstream_id: string | null;
  status: TaskRecord['status'];
  progress: number;
  vendor_status: string | null;
  results: string;
  error: string | null;
  context: string | null;
  seconds: string | null;
  size: string | null;
  price: number;
  refunded: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  deadline_at: number;
  version: number;
}

function toTask(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    tokenId: r.token_id,
    kind: r.kind,
    route: r.route,
    model: r.model,
    upstreamModel: r.upstream_model,
    channel: r.channel,
    upstreamId: r.upstream_id,
    status: r.status,
    progress: r.progress,
    vendorStatus: r.vendor_status,
    results: JSON.parse(r.results) as TaskRecord['results'],
    error: r.error === null ? null : (JSON.parse(r.error) as TaskRecord['error']),
    context: r.context === null ? null : (JSON.parse(r.context) as unknown),
    seconds: r.seconds,
    size: r.size,
    price: r.price,
    refunded: r.refunded !== 0,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    completedAt: r.completed_at,
    deadlineAt: r.deadline_at,
    version: r.version,
  };
}

/** Column of each patchable field, and how its value is stored. */
const PATCH_COLUMNS: Record<Exclude<keyof TaskPatch, 'refund'>, [string, (v: unknown) => unknown]> = {
  upstreamId: ['upstream_id', (v) => v],
  status: ['status', (v) => v],
  progress: ['progress', (v) => v],
  vendorStatus: ['vendor_status', (v) => v],
  results: ['results', (v) => JSON.stringify(v)],
  error: ['error', (v) => (v === null ? null : JSON.stringify(v))],
  context: ['context', (v) => (v === null || v === undefined ? null : JSON.stringify(v))],
  seconds: ['seconds', (v) => v],
  size: ['size', (v) => v],
  updatedAt: ['updated_at', (v) => v],
  completedAt: ['completed_at', (v) => v],
  deadlineAt: ['deadline_at', (v) => v],
};

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
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, token_id, kind, route, model, upstream_model, channel, status, price, created_at, updated_at, deadline_at, version)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'submitting', ?, ?, ?, ?, 1)`,
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
      stmt = db.prepare(`UPDATE tasks SET ${[...sets, 'refunded = ?', 'version = version + 1'].join(', ')} WHERE id = ? AND version = ?`);
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
  const flush = () => {
    const batch = queue;
    queue = [];
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
    batch.forEach((w, i) => w.resolve(results[i]!));
  };
  const write = <T>(run: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ run, resolve: resolve as (out: unknown) => void, reject });
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
    createTask(t: NewTask) {
      return write(() => {
        if (debit.run(t.price, t.tokenId, t.price).changes !== 1) return null;
        insertTask.run(t.id, t.tokenId, t.kind, t.route, t.model, t.upstreamModel, t.channel, t.price, t.createdAt, t.createdAt, t.deadlineAt);
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
        const keys = Object.keys(patch).filter((k) => k !== 'refund' && patch[k as keyof TaskPatch] !== undefined);
        const values = keys.map((k) => PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][1](patch[k as keyof TaskPatch]));
        // The refund rides on the same compare-and-set, and only a task not yet refunded pays out.
        const refundNow = patch.refund === true && row.refunded === 0;
        if (updateFor(keys).run([...values, row.refunded === 1 || refundNow ? 1 : 0, id, version]).changes !== 1) return null;
        if (refundNow) refund.run(row.price, row.token_id);
        return toTask(taskById.get(id) as TaskRow);
      });
    },
    abortTask(id, version) {
      return write(() => {
        const row = taskById.get(id) as TaskRow | undefined;
        if (!row || row.version !== version) return false;
        deleteTask.run(id, version);
        if (row.refunded === 0) refund.run(row.price, row.token_id);
        return true;
      });
    },
    async listUnfinishedTasks(after, limit) {
      return (unfinished.all(after ?? '', limit) as TaskRow[]).map(toTask);
    },
    async close() {
      if (queue.length > 0) flush();
      db.close();
    },
  };
}

import { newTaskRecord, unfinishedCounts, type NewTask, type TaskPatch, type TaskRecord, type TaskStore } from '../store.js';
import { taskMoney } from '../money.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import type { LedgerWrites } from './ledger-writes.js';
import { PATCH_COLUMNS, toTask, type TaskRow } from '../sql-rows.js';
import { stateSeen, withState } from '../task-states.js';
import { taskEvent } from '../webhook-store.js';
import { taskEventWriter } from './webhooks.js';

const UNFINISHED = "status IN ('submitting', 'queued', 'in_progress')";

/** Tasks: created with their debit, changed by compare-and-set, settled or refunded once. */
/** `clock`: the store's, which stamps the states a task went through and its webhook events as it stamps the ledger. */
export function taskMethods(db: Db, { write }: GroupCommit, ledger: LedgerWrites, clock: () => number = () => Date.now()): TaskStore {
  // seq: the order tasks were taken in, which breaks ties of created_at in a token's pages (./own-tasks.ts).
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, token_id, kind, route, model, upstream_model, channel, status, price, pricing, created_at, updated_at, deadline_at, version, lease_owner, lease_until, seq)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'submitting', ?, ?, ?, ?, ?, 1, ?, ?, (SELECT IFNULL(MAX(seq), 0) + 1 FROM tasks))`,
  );
  const taskById = db.prepare('SELECT * FROM tasks WHERE id = ?');
  const deleteAborted = db.prepare('DELETE FROM tasks WHERE id = ? AND version = ?');
  const unfinished = db.prepare(`SELECT * FROM tasks WHERE ${UNFINISHED} AND id > ? ORDER BY id LIMIT ?`);
  const countUnfinished = db.prepare(`SELECT status, count(*) AS n FROM tasks WHERE ${UNFINISHED} GROUP BY status`);
  const claim = db.prepare(
    `UPDATE tasks SET lease_owner = ?, lease_until = ? WHERE id IN
       (SELECT id FROM tasks WHERE ${UNFINISHED} AND (lease_owner IS NULL OR lease_until <= ?) ORDER BY id LIMIT ?) RETURNING *`,
  );
  // One statement for the whole list (a JSON array), as PostgreSQL's ANY: a lease round renews thousands.
  const renew = db.prepare(`UPDATE tasks SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ? AND ${UNFINISHED} RETURNING id`);
  const release = db.prepare(`UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE ${UNFINISHED} AND lease_owner = ?`);
  // One prepared UPDATE per set of patched fields (and whether a state is recorded): a poller
  // writes the same few shapes again and again.
  const updates = new Map<string, ReturnType<Db['prepare']>>();
  const updateFor = (keys: string[], history: boolean) => {
    const sig = `${keys.join(',')}${history ? '+history' : ''}`;
    let stmt = updates.get(sig);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][0]} = ?`);
      if (history) sets.push('history = ?');
      stmt = db.prepare(`UPDATE tasks SET ${[...sets, 'refunded = ?', 'charged = ?', 'version = version + 1'].join(', ')} WHERE id = ? AND version = ?`);
      updates.set(sig, stmt);
    }
    return stmt;
  };
  const read = (id: string) => taskById.get(id) as TaskRow | undefined;
  const writeEvent = taskEventWriter(db);
  /** One compare-and-set, inside a write's transaction. */
  const updateOne = (id: string, version: number, patch: TaskPatch): TaskRecord | null => {
    const row = read(id);
    if (!row || row.version !== version) return null;
    const keys = Object.keys(patch).filter((k) => k !== 'refund' && k !== 'settle' && patch[k as keyof TaskPatch] !== undefined);
    const values = keys.map((k) => PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][1](patch[k as keyof TaskPatch]));
    // The row was just read in this write: the state it moves to is known here, and rides on the same UPDATE.
    const seen = stateSeen({ status: row.status, vendorStatus: row.vendor_status, progress: row.progress }, patch, clock());
    if (seen) values.push(withState(row.history, seen));
    const money = taskMoney({ price: row.price, charged: row.charged, refunded: row.refunded === 1 }, patch);
    if (updateFor(keys, seen !== null).run([...values, money.refunded ? 1 : 0, money.charged, id, version]).changes !== 1) return null;
    if (money.giveBack) ledger.giveBack(row.token_id, money.giveBack.kind, money.giveBack.amount, id, row.model);
    // Just written in this transaction: it is there.
    const updated = read(id);
    if (!updated) return null;
    const task = toTask(updated);
    // The event's deliveries in the same transaction as the state that makes it (docs/webhooks.md).
    const event = taskEvent(row.status, patch, task);
    if (event) writeEvent(id, row.token_id, event, clock());
    return task;
  };

  return {
    createTask(t: NewTask) {
      return write(() => {
        if (!ledger.spend(t.tokenId, t.price, t.id, t.model)) return null;
        const pricing = t.pricing ? JSON.stringify(t.pricing) : null;
        insertTask.run(
          t.id,
          t.tokenId,
          t.kind,
          t.route,
          t.model,
          t.upstreamModel,
          t.channel,
          t.price,
          pricing,
          t.createdAt,
          t.createdAt,
          t.deadlineAt,
          t.lease?.owner ?? null,
          t.lease?.until ?? null,
        );
        return newTaskRecord(t);
      });
    },
    async getTask(id) {
      const row = read(id);
      return row ? toTask(row) : null;
    },
    async getTasks(ids) {
      const out: TaskRecord[] = [];
      for (const id of ids) {
        const row = read(id);
        if (row) out.push(toTask(row));
      }
      return out;
    },
    updateTask(id, version, patch) {
      return write(() => updateOne(id, version, patch));
    },
    // One transaction of the group commit for the whole batch, each write made as updateTask makes it.
    updateTasks(writes) {
      if (writes.length === 0) return Promise.resolve([]);
      return write(() => writes.map((w) => updateOne(w.id, w.version, w.patch)));
    },
    abortTask(id, version) {
      return write(() => {
        const row = read(id);
        if (!row || row.version !== version) return false;
        deleteAborted.run(id, version);
        if (row.refunded === 0) ledger.giveBack(row.token_id, 'refund', row.charged ?? row.price, id, row.model);
        return true;
      });
    },
    async listUnfinishedTasks(after, limit) {
      return (unfinished.all(after ?? '', limit) as TaskRow[]).map(toTask);
    },
    async countUnfinishedTasks() {
      return unfinishedCounts(countUnfinished.all() as { status: string; n: number }[]);
    },
    claimTasks(owner, now, until, limit) {
      return write(() => (claim.all(owner, until, now, limit) as TaskRow[]).map(toTask).sort((a, b) => (a.id < b.id ? -1 : 1)));
    },
    renewLeases(owner, ids, until) {
      if (ids.length === 0) return Promise.resolve([]);
      return write(() => (renew.all(until, JSON.stringify(ids), owner) as { id: string }[]).map((r) => r.id));
    },
    async releaseLeases(owner) {
      await write(() => release.run(owner));
    },
  };
}

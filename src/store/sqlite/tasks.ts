import { newTaskRecord, type NewTask, type Store, type TaskPatch, type TaskRecord } from '../store.js';
import { clampSettlement } from '../money.js';
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';
import type { LedgerWrites } from './ledger-writes.js';
import { PATCH_COLUMNS, toTask, type TaskRow } from './rows.js';

type TaskMethods = Pick<Store, 'createTask' | 'getTask' | 'getTasks' | 'updateTask' | 'abortTask' | 'listUnfinishedTasks'>;

/** Tasks: created with their debit, changed by compare-and-set, settled or refunded once. */
export function taskMethods(db: Db, { write }: GroupCommit, money: LedgerWrites): TaskMethods {
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
  const updates = new Map<string, ReturnType<Db['prepare']>>();
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
  const read = (id: string) => taskById.get(id) as TaskRow | undefined;

  return {
    createTask(t: NewTask) {
      return write(() => {
        if (!money.spend(t.tokenId, t.price, t.id, t.model)) return null;
        const pricing = t.pricing ? JSON.stringify(t.pricing) : null;
        insertTask.run(t.id, t.tokenId, t.kind, t.route, t.model, t.upstreamModel, t.channel, t.price, pricing, t.createdAt, t.createdAt, t.deadlineAt);
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
      return write(() => {
        const row = read(id);
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
        if (refundNow) money.giveBack(row.token_id, 'refund', held, id, row.model);
        if (settleNow) money.giveBack(row.token_id, 'settle', row.price - charged!, id, row.model);
        return toTask(read(id)!);
      });
    },
    abortTask(id, version) {
      return write(() => {
        const row = read(id);
        if (!row || row.version !== version) return false;
        deleteTask.run(id, version);
        if (row.refunded === 0) money.giveBack(row.token_id, 'refund', row.charged ?? row.price, id, row.model);
        return true;
      });
    },
    async listUnfinishedTasks(after, limit) {
      return (unfinished.all(after ?? '', limit) as TaskRow[]).map(toTask);
    },
  };
}

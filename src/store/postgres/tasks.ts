import { newTaskRecord, TASK_HISTORY_LIMIT, TERMINAL_STATUSES, unfinishedCounts, type TaskPatch, type TaskRecord, type TaskStore } from '../store.js';
import { taskMoney } from '../money.js';
import { onlyRow, PATCH_COLUMNS, toLedger, toTask, type LedgerRow, type TaskRow } from '../sql-rows.js';
import type { Database } from './database.js';
import { giveBackBudget } from '../budget-sql.js';
import { debitBudget, GIVE_BACK, ledgerOf, spendParams, spendSql, type LedgerListeners } from './ledger-sql.js';
import { updateTasksMethod } from './task-batch.js';
import { isTerminalEvent, taskEvent } from '../webhook-store.js';
import { insertProgressEvents, insertTaskEvents } from './webhooks.js';

const UNFINISHED = "status IN ('submitting', 'queued', 'in_progress')";

// The debit and the task in one statement: no task without its debit, no debit without its task.
const CREATE = spendSql(`, t AS (
    INSERT INTO tasks (id, token_id, kind, route, model, upstream_model, channel, status, price, pricing, created_at, updated_at, deadline_at, version, lease_owner, lease_until)
    SELECT $3, id, $9, $10, $4, $11, $12, 'submitting', $2::bigint, $13, $14, $14, $15, 1, $16, $17 FROM d
  )`);
// Deleting the row is the once-only step; what it still held goes back in the same statement.
const ABORT = `WITH t AS (DELETE FROM tasks WHERE id = $1 AND version = $2 RETURNING *),
  tb AS (SELECT t.*, b.bp, b.bs FROM t ${debitBudget('b', 't.token_id', 't.id')}),
  g AS (
    UPDATE tokens k SET used = k.used - COALESCE(tb.charged, tb.price), budget_used = ${giveBackBudget('COALESCE(tb.charged, tb.price)', 'tb.bp', 'tb.bs', 'k.')}
    FROM tb WHERE tb.refunded = 0 AND COALESCE(tb.charged, tb.price) > 0 AND k.id = tb.token_id
    RETURNING k.id, COALESCE(tb.charged, tb.price) AS amount, tb.id AS ref, tb.model, tb.bp, tb.bs
  ),
  l AS (INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start) SELECT id, 'refund', ref, model, amount, $3, bp, bs FROM g RETURNING *)
  SELECT (SELECT count(*) FROM t)::int AS ok, l.* FROM (SELECT 1) AS one LEFT JOIN l ON true`;
// SKIP LOCKED: replicas claiming at once take different tasks, and none waits for another.
const CLAIM = `UPDATE tasks SET lease_owner = $1, lease_until = $3 WHERE id IN (
    SELECT id FROM tasks WHERE ${UNFINISHED} AND (lease_owner IS NULL OR lease_until <= $2) ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED
  ) RETURNING *`;

/** The fields of a task's state (TaskStateSeen), their columns, and the SQL type of their values. */
const STATE_COLUMNS: Readonly<Record<string, { column: string; type: string; key: string }>> = {
  status: { column: 'status', type: 'text', key: 'status' },
  vendorStatus: { column: 'vendor_status', type: 'text', key: 'vendorStatus' },
  progress: { column: 'progress', type: 'integer', key: 'progress' },
};

/**
 * The new `history` of an UPDATE whose patch sets some of the state's fields ($1… in the order of
 * `keys`, the time at $at): the state it moves to is appended when it differs from the row's, and
 * only the last TASK_HISTORY_LIMIT are kept (../task-states.ts says the same for SQLite). In a SET
 * clause a column still reads the row as it was, so the comparison needs no read before.
 */
function historySql(keys: string[], at: number): string {
  const after = Object.entries(STATE_COLUMNS).map(([field, c]) => {
    const i = keys.indexOf(field);
    return { ...c, value: i >= 0 ? `$${i + 1}::${c.type}` : c.column };
  });
  const changed = after.map((c) => `${c.value} IS DISTINCT FROM ${c.column}`).join(' OR ');
  const state = `jsonb_build_object('at', $${at}::bigint, ${after.map((c) => `'${c.key}', ${c.value}`).join(', ')})`;
  return `CASE WHEN ${changed} THEN (
      SELECT jsonb_agg(s.e ORDER BY s.n)::text FROM (
        SELECT e, n FROM jsonb_array_elements(COALESCE(history, '[]')::jsonb || jsonb_build_array(${state})) WITH ORDINALITY AS x(e, n)
        ORDER BY n DESC LIMIT ${TASK_HISTORY_LIMIT}
      ) AS s
    ) ELSE history END`;
}

/** Leases renewed per statement (renewLeases). */
const RENEW_CHUNK = 500;

/** Tasks: created with their debit, changed by compare-and-set, settled or refunded once, leased to one replica. */
export function taskMethods(db: Database, listeners: LedgerListeners, clock: () => number = () => Date.now()): TaskStore {
  // The patch's values are $1…$k in the order of `keys`; the state's time, when one may be seen, is $k+1.
  const patchSql = (keys: string[], money: boolean) => {
    const sets = keys.map((k, i) => `${PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][0]} = $${i + 1}`);
    const history = keys.some((k) => k in STATE_COLUMNS);
    if (history) sets.push(`history = ${historySql(keys, keys.length + 1)}`);
    let n = keys.length + (history ? 1 : 0);
    if (money) sets.push(`refunded = $${++n}`, `charged = $${++n}`);
    return `UPDATE tasks SET ${[...sets, 'version = version + 1'].join(', ')} WHERE id = $${n + 1} AND version = $${n + 2} RETURNING *`;
  };
  /** The patch's values, with the time of the state after them when the patch may change the state (as patchSql numbers them). */
  const patchValues = (keys: string[], patch: TaskPatch) => {
    const values = keys.map((k) => PATCH_COLUMNS[k as keyof typeof PATCH_COLUMNS][1](patch[k as keyof TaskPatch]));
    if (keys.some((k) => k in STATE_COLUMNS)) values.push(Date.now());
    return values;
  };
  /** A progress event is no promise (a later one follows): written after the state, and not failing the write that made it. */
  const progressEvent = (t: TaskRecord) => insertProgressEvents(db, [{ task: t.id, token: t.tokenId, event: 'task.progress', at: Date.now() }]);
  return {
    async createTask(t) {
      const { rows } = await db.query<LedgerRow & { ok: number }>(CREATE, [
        ...spendParams(t.tokenId, t.price, t.id, t.model, clock()),
        t.kind,
        t.route,
        t.upstreamModel,
        t.channel,
        t.pricing ? JSON.stringify(t.pricing) : null,
        t.createdAt,
        t.deadlineAt,
        t.lease?.owner ?? null,
        t.lease?.until ?? null,
      ]);
      const row = onlyRow(rows);
      if (row.ok !== 1) return null;
      listeners.tell(ledgerOf(row));
      return newTaskRecord(t);
    },
    async getTask(id) {
      const row = (await db.repeatable<TaskRow>('SELECT * FROM tasks WHERE id = $1', [id])).rows[0];
      return row ? toTask(row) : null;
    },
    async getTasks(ids) {
      if (ids.length === 0) return [];
      return (await db.repeatable<TaskRow>('SELECT * FROM tasks WHERE id = ANY($1::text[])', [ids])).rows.map(toTask);
    },
    async updateTask(id, version, patch) {
      const keys = Object.keys(patch).filter((k) => k !== 'refund' && k !== 'settle' && patch[k as keyof TaskPatch] !== undefined);
      const values = patchValues(keys, patch);
      if (patch.refund !== true && patch.settle === undefined && !TERMINAL_STATUSES.has(patch.status ?? 'queued')) {
        // No money moves: the compare-and-set is the statement itself; a progress event after it (docs/webhooks.md).
        const row = (await db.query<TaskRow>(patchSql(keys, false), [...values, id, version])).rows[0];
        const task = row ? toTask(row) : null;
        // After a non-terminal state (never left), the state before was not terminal either.
        if (task && taskEvent(task.status, patch, task) === 'task.progress') await progressEvent(task);
        return task;
      }
      const { task, written, event } = await db.transaction(async (c) => {
        const row = (await c.query<TaskRow>('SELECT * FROM tasks WHERE id = $1 FOR UPDATE', [id])).rows[0];
        if (!row || row.version !== version) return { task: null, written: [], event: null };
        const money = taskMoney({ price: row.price, charged: row.charged, refunded: row.refunded === 1 }, patch);
        const updated = onlyRow((await c.query<TaskRow>(patchSql(keys, true), [...values, money.refunded ? 1 : 0, money.charged, id, version])).rows);
        const ledger = money.giveBack
          ? (await c.query<LedgerRow>(GIVE_BACK, [row.token_id, money.giveBack.amount, money.giveBack.kind, id, row.model, clock()])).rows
          : [];
        // A terminal event's deliveries in the same transaction as the state (docs/webhooks.md).
        const event = taskEvent(row.status, patch, toTask(updated));
        if (event && isTerminalEvent(event)) await insertTaskEvents(c, [{ task: id, token: row.token_id, event, at: Date.now() }]);
        return { task: toTask(updated), written: ledger.map(toLedger), event };
      });
      listeners.tell(written);
      if (task && event === 'task.progress') await progressEvent(task);
      return task;
    },
    updateTasks: updateTasksMethod(db, listeners, clock),
    async abortTask(id, version) {
      const row = onlyRow((await db.query<LedgerRow & { ok: number }>(ABORT, [id, version, clock()])).rows);
      listeners.tell(ledgerOf(row));
      return row.ok === 1;
    },
    async listUnfinishedTasks(after, limit) {
      const { rows } = await db.repeatable<TaskRow>(`SELECT * FROM tasks WHERE ${UNFINISHED} AND id > $1 ORDER BY id LIMIT $2`, [after ?? '', limit]);
      return rows.map(toTask);
    },
    async countUnfinishedTasks() {
      const { rows } = await db.repeatable<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM tasks WHERE ${UNFINISHED} GROUP BY status`);
      return unfinishedCounts(rows);
    },
    async claimTasks(owner, now, until, limit) {
      const { rows } = await db.query<TaskRow>(CLAIM, [owner, now, until, limit]);
      return rows.map(toTask).sort((a: TaskRecord, b: TaskRecord) => (a.id < b.id ? -1 : 1));
    },
    async renewLeases(owner, ids, until) {
      // In statements of RENEW_CHUNK ids, each its own transaction, in id order as the poller's
      // batched writes lock them: one statement over 9,000 rows held every lock as long as it ran
      // (up to a second in bench/tasks), and the poller's writes to those rows waited that long.
      const sorted = [...ids].sort();
      const held: string[] = [];
      for (let i = 0; i < sorted.length; i += RENEW_CHUNK) {
        const { rows } = await db.repeatable<{ id: string }>(
          `UPDATE tasks SET lease_until = $3 WHERE id = ANY($2::text[]) AND lease_owner = $1 AND ${UNFINISHED} RETURNING id`,
          [owner, sorted.slice(i, i + RENEW_CHUNK), until],
        );
        for (const r of rows) held.push(r.id);
      }
      return held;
    },
    async releaseLeases(owner) {
      await db.repeatable(`UPDATE tasks SET lease_owner = NULL, lease_until = NULL WHERE ${UNFINISHED} AND lease_owner = $1`, [owner]);
    },
  };
}

import { taskMoney } from '../money.js';
import { PATCH_COLUMNS, toLedger, toTask, type LedgerRow, type TaskRow } from '../sql-rows.js';
import { TASK_HISTORY_LIMIT, TERMINAL_STATUSES, type LedgerEntry, type TaskPatch, type TaskRecord, type TaskWrite } from '../store.js';
import type { Client, Database } from './database.js';
import type { LedgerListeners } from './ledger-sql.js';
import { taskEvent } from '../webhook-store.js';
import { eventDeliveriesSql, insertProgressEvents, type TaskEventRow } from './webhooks.js';

/**
 * Many compare-and-sets of tasks in one statement (TaskStore.updateTasks), for the poller, whose
 * looks of one tick each write a task: one UPDATE … FROM the writes, not one per task. The writes
 * travel as one JSON array, each an object with the task's id, the version it read and, under
 * each patched column's name, the value as the column stores it: a column absent from the object
 * is left as it is, one present with null is set to NULL.
 */

/** SQL types of the patchable columns, for the cast of their JSON text. */
const COLUMN_TYPES: Readonly<Record<string, string>> = {
  progress: 'integer',
  updated_at: 'bigint',
  completed_at: 'bigint',
  deadline_at: 'bigint',
  // What a refund or settlement leaves on the task, computed by the money transaction.
  refunded: 'smallint',
  charged: 'bigint',
};
const COLUMNS = [...Object.values(PATCH_COLUMNS).map(([column]) => column), 'refunded', 'charged'];

/** A column's value after the write: the write's, when it names the column, else the row's. */
const after = (column: string) => `CASE WHEN v.e ? '${column}' THEN (v.e->>'${column}')::${COLUMN_TYPES[column] ?? 'text'} ELSE t.${column} END`;

/**
 * The states a task was seen in (TaskStateSeen): the state a write moves the task to is appended
 * when it differs from the row's, the last TASK_HISTORY_LIMIT kept, stamped with $2, as
 * ./tasks.ts does for one write (and ../task-states.ts for SQLite).
 */
const STATE = { status: 'status', vendorStatus: 'vendor_status', progress: 'progress' } as const;
const HISTORY = (() => {
  const changed = Object.values(STATE)
    .map((c) => `${after(c)} IS DISTINCT FROM t.${c}`)
    .join(' OR ');
  const state = `jsonb_build_object('at', $2::bigint, ${Object.entries(STATE)
    .map(([key, c]) => `'${key}', ${after(c)}`)
    .join(', ')})`;
  return `CASE WHEN ${changed} THEN (
      SELECT jsonb_agg(s.e ORDER BY s.n)::text FROM (
        SELECT e, n FROM jsonb_array_elements(COALESCE(t.history, '[]')::jsonb || jsonb_build_array(${state})) WITH ORDINALITY AS x(e, n)
        ORDER BY n DESC LIMIT ${TASK_HISTORY_LIMIT}
      ) AS s
    ) ELSE t.history END`;
})();

/** $1: the writes (JSON), $2: the time of the states seen. Answers the rows it changed. */
const UPDATE_MANY = `WITH v AS (
    SELECT x.e, x.e->>'id' AS id, (x.e->>'version')::integer AS version FROM jsonb_array_elements($1::jsonb) AS x(e)
  )
  UPDATE tasks t SET ${COLUMNS.map((c) => `${c} = ${after(c)}`).join(', ')}, history = ${HISTORY}, version = t.version + 1
  FROM v WHERE t.id = v.id AND t.version = v.version
  RETURNING t.*`;

/**
 * UPDATE_MANY with the deliveries of the events its writes make ($3, JSON TaskEventRow[]) in the
 * same statement: written in the transaction of the states (docs/webhooks.md) without one more
 * round trip while the tasks' rows are locked (bench/tasks: a separate statement there made lease
 * renewals wait on the locks).
 */
const UPDATE_MANY_WITH_EVENTS = `WITH upd AS (${UPDATE_MANY}), ins AS (${eventDeliveriesSql('$3')}) SELECT * FROM upd`;

/**
 * Gives back, for each of $1 (JSON: token_id, amount, kind, ref, model), its amount to its token
 * with a ledger row at $2, as GIVE_BACK (./ledger-sql.ts) does for one: each row names the budget
 * of the debit it gives back, and a token's period use goes down by the amounts whose debit was
 * made in its current period. Several give-backs of one token are summed into one change of its row.
 */
const GIVE_BACK_MANY = `WITH g AS (
    SELECT x.e->>'token_id' AS token_id, (x.e->>'amount')::bigint AS amount, x.e->>'kind' AS kind, x.e->>'ref' AS ref, x.e->>'model' AS model, x.n
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(e, n)
  ), b AS (
    SELECT g.*, d.bp, d.bs FROM g LEFT JOIN LATERAL (
      SELECT budget_period AS bp, budget_start AS bs FROM ledger WHERE token_id = g.token_id AND ref = g.ref AND kind = 'debit' ORDER BY id DESC LIMIT 1
    ) d ON true
    WHERE g.amount > 0
  ), k AS (
    UPDATE tokens t SET used = t.used - (SELECT sum(b.amount) FROM b WHERE b.token_id = t.id),
      budget_used = t.budget_used - (SELECT COALESCE(sum(b.amount), 0) FROM b WHERE b.token_id = t.id AND b.bp = t.budget_period AND b.bs = t.budget_start)
    WHERE t.id IN (SELECT token_id FROM b) RETURNING t.id
  )
  INSERT INTO ledger (token_id, kind, ref, model, amount, at, budget_period, budget_start)
  SELECT b.token_id, b.kind, b.ref, b.model, b.amount, $2::bigint, b.bp, b.bs FROM b WHERE b.token_id IN (SELECT id FROM k) ORDER BY b.n
  RETURNING *`;

/** A write as the JSON object UPDATE_MANY reads. */
function writeObject(w: TaskWrite): Record<string, unknown> {
  const o: Record<string, unknown> = { id: w.id, version: w.version };
  for (const [key, [column, store]] of Object.entries(PATCH_COLUMNS)) {
    const value = w.patch[key as keyof TaskPatch];
    if (value !== undefined) o[column] = store(value);
  }
  return o;
}

/** Writes that move money, or end the task (whose event is written in the same transaction: docs/webhooks.md). */
const movesMoney = (p: TaskPatch) => p.refund === true || p.settle !== undefined || (p.status !== undefined && TERMINAL_STATUSES.has(p.status));

/** A write and its place in the batch. */
type Placed = TaskWrite & { readonly at: number };

/**
 * The writes in groups in which no task appears twice, in order: a task's second write goes in
 * the group after its first, so it reads what the first wrote. Each group in id order, so two
 * batches that lock some of the same rows take them in the same order.
 */
function rounds(writes: readonly TaskWrite[]): Placed[][] {
  const seen = new Map<string, number>();
  const out: Placed[][] = [];
  writes.forEach((w, at) => {
    const k = seen.get(w.id) ?? 0;
    seen.set(w.id, k + 1);
    const round = out[k] ?? [];
    out[k] = round;
    round.push({ ...w, at });
  });
  for (const round of out) round.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return out;
}

/** `updateTasks` of the PostgreSQL store. */
export function updateTasksMethod(db: Database, listeners: LedgerListeners, clock: () => number) {
  /** The writes that move no money, as one statement: the compare-and-set is the statement itself. */
  const plain = async (writes: readonly TaskWrite[]): Promise<Map<string, TaskRecord>> => {
    if (writes.length === 0) return new Map();
    const body = JSON.stringify(writes.map(writeObject));
    const { rows } = await db.query<TaskRow>(UPDATE_MANY, [body, Date.now()]);
    const tasks = new Map(rows.map((r) => [r.id, toTask(r)]));
    // Progress events after the states (no promise, as ./tasks.ts says); a failure does not fail the writes.
    const at = Date.now();
    const events: TaskEventRow[] = [];
    for (const w of writes) {
      const t = tasks.get(w.id);
      if (t && taskEvent(t.status, w.patch, t) === 'task.progress') events.push({ task: t.id, token: t.tokenId, event: 'task.progress', at });
    }
    await insertProgressEvents(db, events);
    return tasks;
  };

  /**
   * The writes that refund or settle, in one transaction: their rows locked in id order, the money
   * rule (../money.ts) applied to each row that is still at the version its write read, then one
   * UPDATE for the tasks and one statement for what goes back to their tokens.
   */
  const withMoney = async (writes: readonly TaskWrite[]): Promise<Map<string, TaskRecord>> => {
    if (writes.length === 0) return new Map();
    const { tasks, written } = await db.transaction(async (c: Client) => {
      const locked = await c.query<Pick<TaskRow, 'id' | 'version' | 'status' | 'price' | 'charged' | 'refunded' | 'token_id' | 'model'>>(
        'SELECT id, version, status, price, charged, refunded, token_id, model FROM tasks WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
        [writes.map((w) => w.id)],
      );
      const rows = new Map(locked.rows.map((r) => [r.id, r]));
      const objects: Record<string, unknown>[] = [];
      const giveBacks: Record<string, unknown>[] = [];
      const events: TaskEventRow[] = [];
      const now = Date.now();
      for (const w of writes) {
        const row = rows.get(w.id);
        if (!row || row.version !== w.version) continue;
        const money = taskMoney({ price: row.price, charged: row.charged, refunded: row.refunded === 1 }, w.patch);
        objects.push({ ...writeObject(w), refunded: money.refunded ? 1 : 0, charged: money.charged });
        if (money.giveBack) giveBacks.push({ token_id: row.token_id, amount: money.giveBack.amount, kind: money.giveBack.kind, ref: w.id, model: row.model });
        // The row is locked at the version the write read: the write applies, and this is the state it makes.
        const event = taskEvent(row.status, w.patch, { status: w.patch.status ?? row.status, error: w.patch.error ?? null });
        if (event) events.push({ task: w.id, token: row.token_id, event, at: now });
      }
      if (objects.length === 0) return { tasks: new Map<string, TaskRecord>(), written: [] as LedgerEntry[] };
      // The events of the tasks these writes end, in the same statement as their states (docs/webhooks.md).
      const updated =
        events.length > 0
          ? await c.query<TaskRow>(UPDATE_MANY_WITH_EVENTS, [JSON.stringify(objects), now, JSON.stringify(events)])
          : await c.query<TaskRow>(UPDATE_MANY, [JSON.stringify(objects), now]);
      const ledger = giveBacks.length > 0 ? (await c.query<LedgerRow>(GIVE_BACK_MANY, [JSON.stringify(giveBacks), clock()])).rows : [];
      return { tasks: new Map(updated.rows.map((r) => [r.id, toTask(r)])), written: ledger.map(toLedger) };
    });
    listeners.tell(written);
    return tasks;
  };

  return async (writes: readonly TaskWrite[]): Promise<(TaskRecord | null)[]> => {
    const out: (TaskRecord | null)[] = writes.map(() => null);
    for (const round of rounds(writes)) {
      const [a, b] = await Promise.all([plain(round.filter((w) => !movesMoney(w.patch))), withMoney(round.filter((w) => movesMoney(w.patch)))]);
      for (const w of round) out[w.at] = a.get(w.id) ?? b.get(w.id) ?? null;
    }
    return out;
  };
}

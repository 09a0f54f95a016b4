import type { QueryResult, QueryResultRow } from 'pg';
import {
  deliveryPageSql,
  endpointChangeColumns,
  fairClaimSql,
  NEW_ENDPOINT_COLUMNS,
  newEndpointValues,
  toDelivery,
  toEndpoint,
  type DeliveryRow,
  type EndpointRow,
  type WebhookEvent,
  type WebhookStore,
} from '../webhook-store.js';
import type { Database } from './database.js';

/** One task event to write deliveries for. */
export interface TaskEventRow {
  readonly task: string;
  readonly token: string;
  readonly event: WebhookEvent;
  readonly at: number;
}

/**
 * The deliveries of task events (`param`: JSON array of TaskEventRow), as ../sqlite/webhooks.ts writes
 * them for one: one per enabled endpoint of the task's token or group that asked for the event,
 * one per callback URL the task named; a progress event within an endpoint's `progress_every_s`
 * of its last one for the task is left out.
 */
export const eventDeliveriesSql = (param: string) => `WITH ev AS (
    SELECT x.e->>'task' AS task_id, x.e->>'token' AS token_id, x.e->>'event' AS event, (x.e->>'at')::bigint AS at
    FROM jsonb_array_elements(${param}::jsonb) AS x(e)
  )
  INSERT INTO webhook_deliveries (id, endpoint_id, url, task_id, token_id, event, created_at, status, attempts, next_at, window_start)
  SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), e.id, COALESCE(c.url, e.url), ev.task_id, ev.token_id, ev.event, ev.at, 'pending', 0, ev.at, ev.at
  FROM ev LEFT JOIN tokens k ON k.id = ev.token_id
  JOIN webhook_endpoints e ON e.enabled = 1 AND (e.token_id = ev.token_id OR e.grp = k.grp) AND e.events::jsonb ? ev.event
  LEFT JOIN webhook_callbacks c ON c.task_id = ev.task_id AND c.endpoint_id = e.id
  WHERE (e.url IS NOT NULL OR c.url IS NOT NULL)
    AND (ev.event <> 'task.progress' OR NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.task_id = ev.task_id AND d.endpoint_id = e.id AND d.event = 'task.progress' AND d.created_at > ev.at - e.progress_every_s * 1000
    ))`;
const EVENT_DELIVERIES = eventDeliveriesSql('$1');

/** Something that runs a statement: the pool, or a transaction's client. */
interface Runs {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/** Writes the deliveries of task events, on `on` (a transaction's client, for terminal events: the same transaction as the state). */
export async function insertTaskEvents(on: Runs, events: readonly TaskEventRow[]): Promise<void> {
  if (events.length === 0) return;
  await on.query(EVENT_DELIVERIES, [JSON.stringify(events)]);
}

/**
 * How long this process trusts its answer to "does any enabled endpoint ask for task.progress?".
 * Progress events are no promise (docs/webhooks.md): skipping them for the few seconds before
 * another replica's new endpoint is seen costs nothing, while asking the store on every write of
 * progress cost the poller an extra statement per batch and each submission a round trip (bench/tasks).
 */
const PROGRESS_GATE_MS = 5_000;

/** Per database: whether progress is wanted, and until when that answer holds. */
const progressGates = new WeakMap<object, { wanted: Promise<boolean>; until: number }>();

/** Whether any enabled endpoint asks for task.progress (cached PROGRESS_GATE_MS; a failed look says yes). */
function progressWanted(db: Runs): Promise<boolean> {
  const now = Date.now();
  const gate = progressGates.get(db);
  if (gate && gate.until > now) return gate.wanted;
  const wanted = db
    .query<{ wanted: boolean }>(`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled = 1 AND events::jsonb ? 'task.progress') AS wanted`)
    .then((r) => r.rows[0]?.wanted !== false)
    .catch(() => true);
  progressGates.set(db, { wanted, until: now + PROGRESS_GATE_MS });
  return wanted;
}

/** Writes progress events after their states (never failing them), unless no endpoint asks for progress. */
export async function insertProgressEvents(db: Runs, events: readonly TaskEventRow[]): Promise<void> {
  if (events.length === 0 || !(await progressWanted(db))) return;
  await insertTaskEvents(db, events).catch(() => undefined);
}

/**
 * The fair claim. PostgreSQL refuses FOR UPDATE beside a window function, so the ids are chosen
 * first (on the statement's snapshot) and then locked with SKIP LOCKED, the lock re-checking that
 * the lease is still free on the row's newest version: a replica that leased one of them meanwhile
 * either still holds its lock (skipped) or has committed (the re-check drops it). The UPDATE checks
 * once more. Two replicas never take the same delivery; a race costs at most a smaller claim.
 */
const CLAIM = `WITH chosen AS (${fairClaimSql({ owner: '$1', now: '$2::bigint', perEndpoint: '$5::bigint', limit: '$4::bigint' })}),
  locked AS (
    SELECT id FROM webhook_deliveries WHERE id IN (SELECT id FROM chosen) AND status = 'pending' AND (lease_owner IS NULL OR lease_until <= $2::bigint)
    FOR UPDATE SKIP LOCKED
  )
  UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $3
  WHERE id IN (SELECT id FROM locked) AND status = 'pending' AND (lease_owner IS NULL OR lease_until <= $2::bigint)
  RETURNING *`;

/** Endpoints, callbacks and deliveries (../webhook-store.ts). */
export function webhookMethods(db: Database): WebhookStore {
  const endpoint = async (id: string) => {
    const row = (await db.repeatable<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1', [id])).rows[0];
    return row ? toEndpoint(row) : null;
  };
  return {
    async createWebhookEndpoint(e, max) {
      progressGates.delete(db);
      // One statement: the count and the insert (an operator's action; two at once may both pass, by one).
      const { rows } = await db.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (${NEW_ENDPOINT_COLUMNS})
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
         WHERE (SELECT count(*) FROM webhook_endpoints WHERE (token_id IS NOT NULL AND token_id = $2) OR (grp IS NOT NULL AND grp = $3)) < $13
         RETURNING *`,
        [...newEndpointValues(e), max],
      );
      return rows[0] ? toEndpoint(rows[0]) : null;
    },
    getWebhookEndpoint: endpoint,
    async listWebhookEndpoints({ tokenId, group }) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (tokenId) args.push(tokenId), where.push(`token_id = $${args.length}`);
      if (group) args.push(group), where.push(`grp = $${args.length}`);
      const sql = `SELECT * FROM webhook_endpoints${where.length > 0 ? ` WHERE ${where.join(' OR ')}` : ''} ORDER BY created_at, id`;
      return (await db.repeatable<EndpointRow>(sql, args)).rows.map(toEndpoint);
    },
    async updateWebhookEndpoint(id, change) {
      progressGates.delete(db);
      const cols = endpointChangeColumns(change);
      const sets = cols.map(([c], i) => `${c} = $${i + 1}`).join(', ');
      const { rows } = await db.repeatable<EndpointRow>(`UPDATE webhook_endpoints SET ${sets} WHERE id = $${cols.length + 1} RETURNING *`, [
        ...cols.map(([, v]) => v),
        id,
      ]);
      return rows[0] ? toEndpoint(rows[0]) : null;
    },
    async rotateWebhookSecret(id, secret, previousUntil, now) {
      const { rows } = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET previous_secret = CASE WHEN $2::bigint > $4::bigint THEN secret END,
           previous_secret_until = CASE WHEN $2::bigint > $4::bigint THEN $2::bigint END, secret = $3, updated_at = $4 WHERE id = $1 RETURNING *`,
        [id, previousUntil, secret, now],
      );
      return rows[0] ? toEndpoint(rows[0]) : null;
    },
    async deleteWebhookEndpoint(id) {
      return ((await db.repeatable('DELETE FROM webhook_endpoints WHERE id = $1', [id])).rowCount ?? 0) === 1;
    },
    async callbackEndpointOf(tokenId) {
      const row = (await db.repeatable<EndpointRow>('SELECT * FROM webhook_endpoints WHERE token_id = $1 AND url IS NULL', [tokenId])).rows[0];
      return row ? toEndpoint(row) : null;
    },
    async putTaskCallback(taskId, endpointId, url, now) {
      await db.repeatable(
        `INSERT INTO webhook_callbacks (task_id, endpoint_id, url, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (task_id) DO UPDATE SET endpoint_id = excluded.endpoint_id, url = excluded.url`,
        [taskId, endpointId, url, now],
      );
    },
    async claimDeliveries(owner, now, until, limit, perEndpoint) {
      const { rows } = await db.query<DeliveryRow>(CLAIM, [owner, now, until, limit, perEndpoint]);
      return rows.map(toDelivery).sort((a, b) => a.nextAt - b.nextAt);
    },
    async finishAttempt(id, owner, o) {
      const { rowCount } = await db.repeatable(
        `UPDATE webhook_deliveries SET status = $3, attempts = attempts + 1, next_at = $4, last_code = $5, last_error = $6, last_at = $7,
           delivered_at = CASE WHEN $3 = 'delivered' THEN $7::bigint ELSE delivered_at END, lease_owner = NULL, lease_until = NULL
         WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
        [id, owner, o.status, o.nextAt, o.code, o.error, o.at],
      );
      return (rowCount ?? 0) === 1;
    },
    async getDelivery(id) {
      const row = (await db.repeatable<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id])).rows[0];
      return row ? toDelivery(row) : null;
    },
    async listDeliveries(q) {
      const { sql, args } = deliveryPageSql(q, (n) => `$${n}`);
      return (await db.repeatable<DeliveryRow>(sql, args)).rows.map(toDelivery);
    },
    async resendDelivery(id, now) {
      const { rows } = await db.repeatable<DeliveryRow>(
        "UPDATE webhook_deliveries SET status = 'pending', next_at = $2, window_start = $2, lease_owner = NULL, lease_until = NULL WHERE id = $1 RETURNING *",
        [id, now],
      );
      return rows[0] ? toDelivery(rows[0]) : null;
    },
    async pendingDeliveries() {
      const { rows } = await db.repeatable<{ n: number; oldest: number | null }>(
        "SELECT count(*)::int AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'",
      );
      const r = rows[0];
      return { count: r?.n ?? 0, oldestAt: r?.oldest ?? null };
    },
    async deleteDeliveriesBefore(before, limit) {
      await db.repeatable(
        `DELETE FROM webhook_callbacks WHERE task_id IN (SELECT task_id FROM webhook_callbacks WHERE created_at < $1
           AND task_id NOT IN (SELECT id FROM tasks WHERE status IN ('submitting', 'queued', 'in_progress')) LIMIT $2)`,
        [before, limit],
      );
      const { rowCount } = await db.repeatable(
        "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < $1 AND status <> 'pending' ORDER BY created_at LIMIT $2)",
        [before, limit],
      );
      return rowCount ?? 0;
    },
  };
}

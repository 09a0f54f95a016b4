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
import type { Db } from './database.js';
import type { GroupCommit } from './group-commit.js';

/**
 * The deliveries one task event makes, one per enabled endpoint of the task's token or its token's
 * group that asked for the event, and one per callback URL the task named (through its token's
 * callback endpoint). A progress event is left out for an endpoint that had one for the task
 * within its `progress_every_s`. ?1 task, ?2 token, ?3 event, ?4 the event's time.
 */
export const EVENT_DELIVERIES_SQLITE = `INSERT INTO webhook_deliveries (id, endpoint_id, url, task_id, token_id, event, created_at, status, attempts, next_at, window_start)
  SELECT 'msg_' || lower(hex(randomblob(16))), e.id, COALESCE(c.url, e.url), ?1, ?2, ?3, ?4, 'pending', 0, ?4, ?4
  FROM webhook_endpoints e LEFT JOIN webhook_callbacks c ON c.task_id = ?1 AND c.endpoint_id = e.id
  WHERE e.enabled = 1
    AND (e.token_id = ?2 OR e.grp = (SELECT grp FROM tokens WHERE id = ?2))
    AND (e.url IS NOT NULL OR c.url IS NOT NULL)
    AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = ?3)
    AND (?3 <> 'task.progress' OR NOT EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.task_id = ?1 AND d.endpoint_id = e.id AND d.event = 'task.progress' AND d.created_at > ?4 - e.progress_every_s * 1000
    ))`;

/** Writes a task event's deliveries; called inside the write that changes the task (one transaction). */
export function taskEventWriter(db: Db): (taskId: string, tokenId: string, event: WebhookEvent, at: number) => void {
  const insert = db.prepare(EVENT_DELIVERIES_SQLITE);
  return (taskId, tokenId, event, at) => void insert.run(taskId, tokenId, event, at);
}

/** Endpoints, callbacks and deliveries (../webhook-store.ts). */
export function webhookMethods(db: Db, { write }: GroupCommit): WebhookStore {
  const byId = db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?');
  const owned = db.prepare('SELECT count(*) AS n FROM webhook_endpoints WHERE (token_id IS NOT NULL AND token_id = ?) OR (grp IS NOT NULL AND grp = ?)');
  const insert = db.prepare(`INSERT INTO webhook_endpoints (${NEW_ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const callbackOf = db.prepare('SELECT * FROM webhook_endpoints WHERE token_id = ? AND url IS NULL');
  const rotate = db.prepare(
    'UPDATE webhook_endpoints SET previous_secret = CASE WHEN ? > ? THEN secret END, previous_secret_until = CASE WHEN ? > ? THEN ? END, secret = ?, updated_at = ? WHERE id = ?',
  );
  const remove = db.prepare('DELETE FROM webhook_endpoints WHERE id = ?');
  const putCallback = db.prepare(
    'INSERT INTO webhook_callbacks (task_id, endpoint_id, url, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET endpoint_id = excluded.endpoint_id, url = excluded.url',
  );
  // One writer at a time (the group commit): the ids chosen are still free when they are updated.
  const claim = db.prepare(
    `UPDATE webhook_deliveries SET lease_owner = ?1, lease_until = ?3 WHERE id IN (${fairClaimSql({ owner: '?1', now: '?2', perEndpoint: '?5', limit: '?4' })}) RETURNING *`,
  );
  const finish = db.prepare(
    `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_at = ?, last_code = ?, last_error = ?, last_at = ?,
       delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END, lease_owner = NULL, lease_until = NULL
     WHERE id = ? AND lease_owner = ? AND status = 'pending'`,
  );
  const delivery = db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?');
  const resend = db.prepare(
    "UPDATE webhook_deliveries SET status = 'pending', next_at = ?, window_start = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? RETURNING *",
  );
  const pending = db.prepare("SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'");
  const purge = db.prepare(
    "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ? AND status <> 'pending' ORDER BY created_at LIMIT ?)",
  );
  const purgeCallbacks = db.prepare(`DELETE FROM webhook_callbacks WHERE task_id IN (SELECT task_id FROM webhook_callbacks WHERE created_at < ?
       AND task_id NOT IN (SELECT id FROM tasks WHERE status IN ('submitting', 'queued', 'in_progress')) LIMIT ?)`);
  const endpoint = (id: string) => {
    const row = byId.get(id) as EndpointRow | undefined;
    return row ? toEndpoint(row) : null;
  };

  return {
    createWebhookEndpoint(e, max) {
      return write(() => {
        if ((owned.get(e.tokenId, e.group) as { n: number }).n >= max) return null;
        insert.run(...newEndpointValues(e));
        return endpoint(e.id);
      });
    },
    async getWebhookEndpoint(id) {
      return endpoint(id);
    },
    async listWebhookEndpoints({ tokenId, group }) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (tokenId) where.push('token_id = ?'), args.push(tokenId);
      if (group) where.push('grp = ?'), args.push(group);
      const sql = `SELECT * FROM webhook_endpoints${where.length > 0 ? ` WHERE ${where.join(' OR ')}` : ''} ORDER BY created_at, id`;
      return (db.prepare(sql).all(...args) as EndpointRow[]).map(toEndpoint);
    },
    updateWebhookEndpoint(id, change) {
      const cols = endpointChangeColumns(change);
      return write(() => {
        db.prepare(`UPDATE webhook_endpoints SET ${cols.map(([c]) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...cols.map(([, v]) => v), id);
        return endpoint(id);
      });
    },
    rotateWebhookSecret(id, secret, previousUntil, now) {
      return write(() => {
        rotate.run(previousUntil, now, previousUntil, now, previousUntil, secret, now, id);
        return endpoint(id);
      });
    },
    deleteWebhookEndpoint(id) {
      return write(() => remove.run(id).changes === 1);
    },
    async callbackEndpointOf(tokenId) {
      const row = callbackOf.get(tokenId) as EndpointRow | undefined;
      return row ? toEndpoint(row) : null;
    },
    async putTaskCallback(taskId, endpointId, url, now) {
      await write(() => putCallback.run(taskId, endpointId, url, now));
    },
    claimDeliveries(owner, now, until, limit, perEndpoint) {
      return write(() => (claim.all(owner, now, until, limit, perEndpoint) as DeliveryRow[]).map(toDelivery).sort((a, b) => a.nextAt - b.nextAt));
    },
    finishAttempt(id, owner, o) {
      return write(() => finish.run(o.status, o.nextAt, o.code, o.error, o.at, o.status, o.at, id, owner).changes === 1);
    },
    async getDelivery(id) {
      const row = delivery.get(id) as DeliveryRow | undefined;
      return row ? toDelivery(row) : null;
    },
    async listDeliveries(q) {
      const { sql, args } = deliveryPageSql(q, () => '?');
      return (db.prepare(sql).all(...args) as DeliveryRow[]).map(toDelivery);
    },
    resendDelivery(id, now) {
      return write(() => {
        const row = resend.get(now, now, id) as DeliveryRow | undefined;
        return row ? toDelivery(row) : null;
      });
    },
    async pendingDeliveries() {
      const r = pending.get() as { n: number; oldest: number | null };
      return { count: r.n, oldestAt: r.oldest };
    },
    deleteDeliveriesBefore(before, limit) {
      return write(() => {
        purgeCallbacks.run(before, limit);
        return purge.run(before, limit).changes;
      });
    },
  };
}

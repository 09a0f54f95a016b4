/**
 * Webhooks (docs/webhooks.md): the endpoints operators register for a token or a group, the
 * callback URLs submissions name, and the deliveries of task events to them. A terminal event's
 * deliveries are written by the drivers in the same transaction as the task's terminal state
 * (`taskEvent` says which event a task write makes), so a crash neither loses nor doubles one.
 */
import type { TaskPatch, TaskRecord, TaskStatus } from './task-store.js';

/** The events an endpoint may ask for. `task.cancelled` is a task that failed because it was cancelled at the vendor. */
export type WebhookEvent = 'task.completed' | 'task.failed' | 'task.cancelled' | 'task.progress';
export const WEBHOOK_EVENTS: readonly WebhookEvent[] = ['task.completed', 'task.failed', 'task.cancelled', 'task.progress'];

/** Where a delivery is: still to be sent (or being sent), answered with a 2xx, or given up on. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** An endpoint as stored. Exactly one of `tokenId` and `group` is set. */
export interface WebhookEndpoint {
  /** `we_…`. */
  readonly id: string;
  readonly tokenId: string | null;
  readonly group: string | null;
  /**
   * Where deliveries go; null for a token's callback endpoint, which sends nothing by itself: its
   * secret and events serve the `callback_url` each of the token's submissions may name, within
   * `callbackOrigins`.
   */
  readonly url: string | null;
  readonly callbackOrigins: readonly string[] | null;
  readonly events: readonly WebhookEvent[];
  /** `task.progress` is sent at most once per this many seconds per task. */
  readonly progressEverySeconds: number;
  readonly enabled: boolean;
  readonly description: string | null;
  /** `whsec_…`; shown once, when made or rotated. */
  readonly secret: string;
  /** The secret a rotation replaced, still signing beside the new one until `previousSecretUntil` (Unix ms). */
  readonly previousSecret: string | null;
  readonly previousSecretUntil: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What a new endpoint needs. */
export type NewWebhookEndpoint = Omit<WebhookEndpoint, 'previousSecret' | 'previousSecretUntil' | 'updatedAt'>;

/** What an update of an endpoint may change (absent: unchanged). */
export type WebhookEndpointChange = Partial<
  Pick<WebhookEndpoint, 'url' | 'callbackOrigins' | 'events' | 'progressEverySeconds' | 'enabled' | 'description'>
> & {
  readonly updatedAt: number;
};

/** One event for one endpoint: its id is the `webhook-id` every attempt carries. */
export interface WebhookDelivery {
  /** `msg_…`. */
  readonly id: string;
  readonly endpointId: string;
  /** Where it goes: the endpoint's URL when it was written, or the task's callback URL. */
  readonly url: string;
  readonly taskId: string;
  readonly tokenId: string;
  readonly event: WebhookEvent;
  /** When the event happened (Unix ms). */
  readonly createdAt: number;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  /** When the next attempt is due (pending only). */
  readonly nextAt: number;
  /** The retries run until this plus the give-up window: the event's time, or when an operator sent it again. */
  readonly windowStart: number;
  readonly lastCode: number | null;
  readonly lastError: string | null;
  readonly lastAt: number | null;
  readonly deliveredAt: number | null;
}

/** The outcome of one attempt, as the worker writes it. */
export interface AttemptOutcome {
  readonly status: DeliveryStatus;
  /** The next attempt's time, for one still pending. */
  readonly nextAt: number;
  readonly code: number | null;
  readonly error: string | null;
  readonly at: number;
}

/** A page of the delivery log: newest first, filtered. */
export interface DeliveryQuery {
  readonly endpointId?: string | null;
  readonly taskId?: string | null;
  readonly status?: DeliveryStatus | null;
  /** Rows before this position (created_at, id), from a previous page. */
  readonly before?: { readonly at: number; readonly id: string } | null;
  readonly limit: number;
}

/** The endpoints, the callbacks tasks name, and the deliveries. */
export interface WebhookStore {
  /** Inserts an endpoint unless its owner (token or group) has `max` already; null then. */
  createWebhookEndpoint(endpoint: NewWebhookEndpoint, max: number): Promise<WebhookEndpoint | null>;
  getWebhookEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** Every endpoint, or a token's, or a group's, oldest first. */
  listWebhookEndpoints(filter: { readonly tokenId?: string | null; readonly group?: string | null }): Promise<WebhookEndpoint[]>;
  updateWebhookEndpoint(id: string, change: WebhookEndpointChange): Promise<WebhookEndpoint | null>;
  /** A new secret; the current one keeps signing until `previousUntil` (now or earlier: it stops at once). */
  rotateWebhookSecret(id: string, secret: string, previousUntil: number, now: number): Promise<WebhookEndpoint | null>;
  /** Removes an endpoint; its pending deliveries are given up by the worker when it finds the endpoint gone. */
  deleteWebhookEndpoint(id: string): Promise<boolean>;
  /** The callback endpoint of a token (url null), if it has one. */
  callbackEndpointOf(tokenId: string): Promise<WebhookEndpoint | null>;
  /** Notes the callback URL a submission named, before its task can end (it is read when the task's events are written). */
  putTaskCallback(taskId: string, endpointId: string, url: string, now: number): Promise<void>;
  /**
   * Leases up to `limit` pending deliveries due at `now` whose lease is free or ran out to `owner`
   * until `until`. Fair across endpoints: no endpoint ends with more than `perEndpoint` live leases
   * of `owner` (those it holds already count), and the earliest due of each endpoint come first,
   * round-robin (every endpoint's first, then every endpoint's second, …). Two calls never take
   * the same delivery.
   */
  claimDeliveries(owner: string, now: number, until: number, limit: number, perEndpoint: number): Promise<WebhookDelivery[]>;
  /** Writes an attempt's outcome and frees the lease, if `owner` still holds it; false when not. */
  finishAttempt(id: string, owner: string, outcome: AttemptOutcome): Promise<boolean>;
  getDelivery(id: string): Promise<WebhookDelivery | null>;
  listDeliveries(query: DeliveryQuery): Promise<WebhookDelivery[]>;
  /** "Send again": the delivery, whatever its status, pending at `now` with a new retry window; same id. */
  resendDelivery(id: string, now: number): Promise<WebhookDelivery | null>;
  /** Pending deliveries: how many, and the event time of the oldest (null when none). */
  pendingDeliveries(): Promise<{ readonly count: number; readonly oldestAt: number | null }>;
  /** Deletes up to `limit` finished deliveries made before `before` (and callbacks of that age); how many deliveries went. */
  deleteDeliveriesBefore(before: number, limit: number): Promise<number>;
}

/** The event a task write makes, if any: the task's new record, the status it had before, and the patch. */
export function taskEvent(before: TaskStatus, patch: TaskPatch, after: Pick<TaskRecord, 'status' | 'error'>): WebhookEvent | null {
  const terminal = (s: TaskStatus | undefined) => s === 'completed' || s === 'failed';
  if (terminal(before)) return null;
  if (terminal(patch.status)) {
    if (after.status === 'completed') return 'task.completed';
    return after.error?.code === 'task_cancelled' ? 'task.cancelled' : 'task.failed';
  }
  if (patch.progress !== undefined || patch.status === 'in_progress') return 'task.progress';
  return null;
}

/** Whether an event is a terminal one (written with the task's terminal state). */
export const isTerminalEvent = (e: WebhookEvent) => e !== 'task.progress';

/** An `webhook_endpoints` row, as both SQL drivers keep it. */
export interface EndpointRow {
  id: string;
  token_id: string | null;
  grp: string | null;
  url: string | null;
  callback_origins: string | null;
  events: string;
  progress_every_s: number;
  enabled: number;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  updated_at: number;
}

/** The columns a new endpoint is inserted with, in the order of `newEndpointValues` (updated_at last, the creation time again). */
export const NEW_ENDPOINT_COLUMNS = 'id, token_id, grp, url, callback_origins, events, progress_every_s, enabled, description, secret, created_at, updated_at';

/** The values of NEW_ENDPOINT_COLUMNS for a new endpoint, as both SQL drivers store them. */
export function newEndpointValues(e: NewWebhookEndpoint): unknown[] {
  const origins = e.callbackOrigins === null ? null : JSON.stringify(e.callbackOrigins);
  return [
    e.id,
    e.tokenId,
    e.group,
    e.url,
    origins,
    JSON.stringify(e.events),
    e.progressEverySeconds,
    e.enabled ? 1 : 0,
    e.description,
    e.secret,
    e.createdAt,
    e.createdAt,
  ];
}

/** An endpoint as the store answers it. */
export function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    tokenId: r.token_id,
    group: r.grp,
    url: r.url,
    callbackOrigins: r.callback_origins === null ? null : (JSON.parse(r.callback_origins) as string[]),
    events: JSON.parse(r.events) as WebhookEvent[],
    progressEverySeconds: Number(r.progress_every_s),
    enabled: Number(r.enabled) === 1,
    description: r.description,
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretUntil: r.previous_secret_until === null ? null : Number(r.previous_secret_until),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A `webhook_deliveries` row. */
export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  url: string;
  task_id: string;
  token_id: string;
  event: string;
  created_at: number;
  status: string;
  attempts: number;
  next_at: number;
  window_start: number;
  last_code: number | null;
  last_error: string | null;
  last_at: number | null;
  delivered_at: number | null;
}

const num = (v: number | null) => (v === null ? null : Number(v));

/** A delivery as the store answers it. */
export function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    url: r.url,
    taskId: r.task_id,
    tokenId: r.token_id,
    event: r.event as WebhookEvent,
    createdAt: Number(r.created_at),
    status: r.status as DeliveryStatus,
    attempts: Number(r.attempts),
    nextAt: Number(r.next_at),
    windowStart: Number(r.window_start),
    lastCode: num(r.last_code),
    lastError: r.last_error,
    lastAt: num(r.last_at),
    deliveredAt: num(r.delivered_at),
  };
}

/**
 * The ids a fair claim takes (WebhookStore.claimDeliveries), for both SQL drivers; `p` names the
 * driver's placeholders of the owner, `now`, `perEndpoint` and `limit`. The due deliveries free to
 * lease are ranked within their endpoint (earliest due first), the live leases the owner already
 * holds on each endpoint are added to the rank, and what stays within `perEndpoint` is taken rank
 * by rank: one endpoint with a long queue (a receiver that never answers) gets at most its share
 * of a replica's slots and never delays another's first deliveries. A lease is only taken on a
 * due delivery and `next_at` changes only as the lease is freed, so the owner's live leases are
 * among the due rows too: one read of the `webhook_deliveries_due` index finds both, whatever the
 * size of the delivery log (the cost grows with the deliveries due, not with those kept).
 */
export function fairClaimSql(p: { readonly owner: string; readonly now: string; readonly perEndpoint: string; readonly limit: string }): string {
  return `WITH due AS MATERIALIZED (
      SELECT id, endpoint_id, next_at,
        CASE WHEN lease_owner IS NULL OR lease_until <= ${p.now} THEN 1 ELSE 0 END AS free,
        CASE WHEN lease_owner = ${p.owner} AND lease_until > ${p.now} THEN 1 ELSE 0 END AS mine
      FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ${p.now}
    ), ranked AS (
      SELECT id, next_at, free,
        row_number() OVER (PARTITION BY endpoint_id, free ORDER BY next_at, id) AS rk,
        sum(mine) OVER (PARTITION BY endpoint_id) AS busy
      FROM due
    )
    SELECT id FROM ranked WHERE free = 1 AND rk + busy <= ${p.perEndpoint}
    ORDER BY rk, next_at, id
    LIMIT ${p.limit}`;
}

/** The columns an endpoint change sets, as [column, value as stored]. */
export function endpointChangeColumns(change: WebhookEndpointChange): [string, unknown][] {
  const out: [string, unknown][] = [];
  if (change.url !== undefined) out.push(['url', change.url]);
  if (change.callbackOrigins !== undefined) out.push(['callback_origins', change.callbackOrigins === null ? null : JSON.stringify(change.callbackOrigins)]);
  if (change.events !== undefined) out.push(['events', JSON.stringify(change.events)]);
  if (change.progressEverySeconds !== undefined) out.push(['progress_every_s', change.progressEverySeconds]);
  if (change.enabled !== undefined) out.push(['enabled', change.enabled ? 1 : 0]);
  if (change.description !== undefined) out.push(['description', change.description]);
  out.push(['updated_at', change.updatedAt]);
  return out;
}

/** The WHERE clause and arguments of a delivery log page (`p(n)` writes the driver's n-th placeholder). */
export function deliveryPageSql(q: DeliveryQuery, p: (n: number) => string): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (clause: (n: (i: number) => string) => string, ...values: unknown[]) => {
    const first = args.length + 1;
    args.push(...values);
    where.push(clause((i) => p(first + i)));
  };
  if (q.endpointId) add((n) => `endpoint_id = ${n(0)}`, q.endpointId);
  if (q.taskId) add((n) => `task_id = ${n(0)}`, q.taskId);
  if (q.status) add((n) => `status = ${n(0)}`, q.status);
  if (q.before) add((n) => `(created_at < ${n(0)} OR (created_at = ${n(1)} AND id < ${n(2)}))`, q.before.at, q.before.at, q.before.id);
  args.push(q.limit);
  const sql = `SELECT * FROM webhook_deliveries${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${p(args.length)}`;
  return { sql, args };
}

/**
 * The admin routes of webhooks (docs/webhooks.md, "Endpoints" and "The delivery log"): endpoints
 * registered, changed, rotated and deleted; the delivery log, filtered and paged; "send again".
 */
import { GatewayError } from '../errors/gateway-error.js';
import { recordAudit } from '../records/audit.js';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookDelivery } from '../store/store.js';
import { groupProblem } from '../tokens/manage-tokens.js';
import { findToken, unknownToken } from '../tokens/token-ref.js';
import {
  changeEndpoint,
  deleteEndpoint,
  ENDPOINT_FIELDS,
  endpointOf,
  endpointView,
  MAX_GRACE_SECONDS,
  registerEndpoint,
  rotateEndpointSecret,
  type EndpointInput,
} from '../webhooks/manage-endpoints.js';
import { adminBody, pathParam, textParam, wholeParam } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { readCursor, writeCursor } from './page-cursor.js';
import { operator } from './token-keys-admin.js';
import { tokenNames } from './token-names.js';

/** `POST /admin/webhooks/endpoints`. */
export const CREATE_ENDPOINT_BODY = adminBody({ type: 'object', additionalProperties: false, required: ['events'], properties: ENDPOINT_FIELDS });
/** `POST /admin/webhooks/endpoints/{endpoint_id}`: the fields to change. */
export const CHANGE_ENDPOINT_BODY = adminBody({ type: 'object', additionalProperties: false, minProperties: 1, properties: ENDPOINT_FIELDS });
/** `POST /admin/webhooks/endpoints/{endpoint_id}/rotate`: how long the current secret keeps signing (default a day). */
export const ROTATE_SECRET_BODY = adminBody({
  type: 'object',
  additionalProperties: false,
  properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: MAX_GRACE_SECONDS } },
});

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** What operators see of one delivery. */
export function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    task_id: d.taskId,
    token_id: d.tokenId,
    event: d.event,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? iso(d.nextAt) : null,
    last_status_code: d.lastCode,
    last_error: d.lastError,
    last_attempt_at: iso(d.lastAt),
    delivered_at: iso(d.deliveredAt),
    created_at: iso(d.createdAt),
  };
}

const endpointId = (ctx: AdminContext) => pathParam(ctx.params, 'endpoint_id');

/** `GET /admin/webhooks/endpoints?token=&group=`: every endpoint, or a token's (with its group's), or a group's; never a secret. */
export async function listEndpoints({ query, deps }: AdminContext): Promise<AdminAnswer> {
  const ref = textParam(query.get('token'), 'token', 200);
  const token = ref === null ? null : await findToken(deps.store, ref);
  if (ref !== null && !token) throw new GatewayError('not_found', unknownToken(ref));
  const group = textParam(query.get('group'), 'group', 200) ?? token?.group ?? null;
  const endpoints = await deps.store.listWebhookEndpoints({ tokenId: token?.id ?? null, group });
  const names = await tokenNames(
    deps.store,
    endpoints.map((e) => e.tokenId),
  );
  return { json: { endpoints: endpoints.map((e) => ({ ...endpointView(e), token_name: (e.tokenId && names.get(e.tokenId)) ?? null })) } };
}

/** `POST /admin/webhooks/endpoints`: registers an endpoint; its secret is answered this once. */
export async function createEndpoint({ snapshot, body, deps }: AdminContext): Promise<AdminAnswer> {
  const input = body as EndpointInput;
  if (input.group !== undefined) {
    const problem = groupProblem(snapshot.groups, input.group);
    if (problem) throw new GatewayError('invalid_request', problem, { param: 'group' });
  }
  const { endpoint, secret } = await registerEndpoint(operator(deps), input, deps.webhooks.settings.allowPrivate);
  return { status: 201, json: { ...endpointView(endpoint), secret } };
}

/** `GET /admin/webhooks/endpoints/{endpoint_id}`. */
export async function getEndpoint(ctx: AdminContext): Promise<AdminAnswer> {
  return { json: endpointView(await endpointOf(ctx.deps, endpointId(ctx))) };
}

/** `POST /admin/webhooks/endpoints/{endpoint_id}`: changes the fields sent. */
export async function updateEndpoint(ctx: AdminContext): Promise<AdminAnswer> {
  const e = await changeEndpoint(operator(ctx.deps), endpointId(ctx), ctx.body as EndpointInput, ctx.deps.webhooks.settings.allowPrivate);
  return { json: endpointView(e) };
}

/** `POST /admin/webhooks/endpoints/{endpoint_id}/rotate`: a new secret, answered this once; the old one signs too for `grace_seconds`. */
export async function rotateEndpoint(ctx: AdminContext): Promise<AdminAnswer> {
  const grace = (ctx.body as { grace_seconds?: number }).grace_seconds;
  const { endpoint, secret } = await rotateEndpointSecret(operator(ctx.deps), endpointId(ctx), grace);
  return { json: { ...endpointView(endpoint), secret } };
}

/** `DELETE /admin/webhooks/endpoints/{endpoint_id}`. */
export async function removeEndpoint(ctx: AdminContext): Promise<AdminAnswer> {
  const id = endpointId(ctx);
  await deleteEndpoint(operator(ctx.deps), id);
  return { json: { id, deleted: true } };
}

/**
 * `GET /admin/webhooks/deliveries?endpoint=&task=&status=&limit=&before=`: the delivery log, newest
 * first; `next` is the `before` of the next page, null on the last.
 */
export async function listDeliveries({ query, deps }: AdminContext): Promise<AdminAnswer> {
  const status = textParam(query.get('status'), 'status', 20);
  if (status !== null && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
    throw new GatewayError('invalid_request', `status must be one of ${DELIVERY_STATUSES.join(', ')}`, { param: 'status' });
  }
  const limit = wholeParam(query.get('limit'), 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
  const rows = await deps.store.listDeliveries({
    endpointId: textParam(query.get('endpoint'), 'endpoint', 200),
    taskId: textParam(query.get('task'), 'task', 200),
    status: status as DeliveryStatus | null,
    before: readCursor(query.get('before'), 200),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const names = await tokenNames(
    deps.store,
    page.map((d) => d.tokenId),
  );
  const deliveries = page.map((d) => ({ ...deliveryView(d), token_name: (d.tokenId && names.get(d.tokenId)) ?? null }));
  return { json: { deliveries, next: rows.length > limit && last ? writeCursor(last.createdAt, last.id) : null } };
}

/** `GET /admin/webhooks/deliveries/{delivery_id}`. */
export async function getDelivery(ctx: AdminContext): Promise<AdminAnswer> {
  const id = pathParam(ctx.params, 'delivery_id');
  const d = await ctx.deps.store.getDelivery(id);
  if (!d) throw new GatewayError('not_found', `no webhook delivery ${JSON.stringify(id.slice(0, 100))}`);
  return { json: deliveryView(d) };
}

/** `POST /admin/webhooks/deliveries/{delivery_id}/resend`: "send again": pending now, the same webhook-id, a new retry window. */
export async function resendDelivery(ctx: AdminContext): Promise<AdminAnswer> {
  const id = pathParam(ctx.params, 'delivery_id');
  const op = operator(ctx.deps);
  const d = await ctx.deps.store.resendDelivery(id, op.now?.() ?? Date.now());
  if (!d) throw new GatewayError('not_found', `no webhook delivery ${JSON.stringify(id.slice(0, 100))}`);
  await recordAudit(op, 'webhook.resend', id, null, { task_id: d.taskId, event: d.event });
  ctx.deps.webhooks.nudge();
  return { json: deliveryView(d) };
}

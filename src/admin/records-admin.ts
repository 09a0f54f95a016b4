import { GatewayError } from '../errors/gateway-error.js';
import type { AuditQuery, AuditRecord, RequestQuery, RequestRecord } from '../store/store.js';
import { textParam, wholeParam } from './admin-input.js';
import type { AdminAnswer, AdminContext } from './admin-types.js';
import { readCursor, writeCursor } from './page-cursor.js';
import { tokenNames } from './token-names.js';

/** Records one page gives when `limit` is not set, and the most it may ask for. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
/** Longest token id, model, route, error code or request id a filter may name; nothing stored is longer. */
const MAX_NAME = 200;
/** Unix ms of 9999-12-31: an instant past it is no time anyone asks for. */
const MAX_MS = 253_402_300_799_999;

/** What operators see of one request (GET /admin/requests), with its token's name (null: none, deleted, or not looked up). */
export function requestView(r: RequestRecord, tokenName: string | null = null) {
  return {
    id: r.id,
    at: r.at,
    request_id: r.requestId,
    token_id: r.tokenId,
    token_name: tokenName,
    route: r.route,
    model: r.model,
    channel: r.channel,
    status: r.status,
    error: r.error,
    ms: r.ms,
    units: r.units,
    task_id: r.taskId,
  };
}

/** What operators see of one action (GET /admin/audit); `target_name` is the name of the token the target is, null for any other target. */
export function auditView(r: AuditRecord, targetName: string | null = null) {
  return { id: r.id, at: r.at, actor: r.actor, action: r.action, target: r.target, target_name: targetName, before: r.before, after: r.after };
}

/**
 * `GET /admin/requests?token=&model=&route=&status=&error=&request_id=&task=&from=&to=&limit=&before=`:
 * the request log, newest first, each filter narrowing; `next` is the `before` of the next page,
 * null on the last. Pages are positions in (at, id): records written meanwhile never shift them.
 */
export async function listRequests({ query, deps }: AdminContext): Promise<AdminAnswer> {
  const { from, to, limit, before } = page(query);
  const status = wholeParam(query.get('status'), 'status', 100, 599);
  const q: RequestQuery = {
    tokenId: text(query, 'token'),
    model: text(query, 'model'),
    route: text(query, 'route'),
    status: status ?? undefined,
    error: text(query, 'error'),
    requestId: text(query, 'request_id'),
    taskId: text(query, 'task'),
    from,
    to,
    before,
    // One more than the page: whether there is a next page is known, not guessed from a full one.
    limit: limit + 1,
  };
  const rows = await deps.store.findRequests(q);
  const shown = rows.slice(0, limit);
  const names = await tokenNames(
    deps.store,
    shown.map((r) => r.tokenId),
  );
  return { json: { requests: shown.map((r) => requestView(r, (r.tokenId && names.get(r.tokenId)) ?? null)), next: nextCursor(rows, limit) } };
}

/** `GET /admin/audit?actor=&action=&target=&from=&to=&limit=&before=`: operator actions, newest first, in pages as above. */
export async function listAudit({ query, deps }: AdminContext): Promise<AdminAnswer> {
  const { from, to, limit, before } = page(query);
  const q: AuditQuery = { actor: text(query, 'actor'), action: text(query, 'action'), target: text(query, 'target'), from, to, before, limit: limit + 1 };
  const rows = await deps.store.findAudit(q);
  const shown = rows.slice(0, limit);
  // Only a token action's target is a token id; other targets (endpoints, reloads) are never looked up.
  const names = await tokenNames(
    deps.store,
    shown.map((r) => (r.action.startsWith('token.') ? r.target : null)),
  );
  return { json: { audit: shown.map((r) => auditView(r, (r.target && names.get(r.target)) ?? null)), next: nextCursor(rows, limit) } };
}

/** The time range, page size and cursor both logs take; a bad one names its parameter. */
function page(query: URLSearchParams) {
  const from = instant(query.get('from'), 'from');
  const to = instant(query.get('to'), 'to');
  if (from !== undefined && to !== undefined && from >= to) throw new GatewayError('invalid_request', 'from must be before to', { param: 'to' });
  const limit = wholeParam(query.get('limit'), 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
  return { from, to, limit, before: readCursor(query.get('before'), MAX_NAME) };
}

/** A filter's value; undefined when absent or empty. */
function text(query: URLSearchParams, name: string): string | undefined {
  return textParam(query.get(name), name, MAX_NAME) ?? undefined;
}

/**
 * An instant: Unix milliseconds, a UTC date `YYYY-MM-DD` (its midnight), or an ISO 8601 time with
 * its zone (`2026-03-01T14:02:00Z`, `…+01:00`); undefined when absent.
 */
function instant(raw: string | null, name: string): number | undefined {
  if (raw === null || raw === '') return undefined;
  let ms = NaN;
  if (/^[0-9]{1,15}$/.test(raw)) ms = Number(raw);
  else if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(raw)) {
    ms = Date.parse(`${raw}T00:00:00Z`);
    // Round-tripped, so 2026-02-30 is refused rather than read as March 2nd.
    if (!(ms >= 0) || new Date(ms).toISOString().slice(0, 10) !== raw) ms = NaN;
  } else if (/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?(Z|[+-][0-9]{2}:[0-9]{2})$/.test(raw)) ms = Date.parse(raw);
  if (!(ms >= 0 && ms <= MAX_MS)) {
    throw new GatewayError('invalid_request', `${name} must be Unix milliseconds, a UTC date (YYYY-MM-DD) or an ISO 8601 time with its zone`, { param: name });
  }
  return ms;
}

/** The cursor after a page: its last record's (at, id) as base64url JSON; null when no record follows. */
function nextCursor(rows: readonly { at: number; id: string }[], limit: number): string | null {
  const last = rows[limit - 1];
  return rows.length > limit && last ? writeCursor(last.at, last.id) : null;
}

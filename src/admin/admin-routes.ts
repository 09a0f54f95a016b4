import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Snapshot } from '../config/snapshot.js';
import type { AdminAnswer, AdminContext, AdminDeps } from './admin-types.js';
import { GatewayError } from '../errors/gateway-error.js';
import { compilePathTemplate } from '../config/path-template.js';
import type { CompiledBody, PathMatcher } from '../config/snapshot.js';
import { matchPath, methodNotAllowed } from '../http/match-route.js';
import { readJsonBody } from '../http/read-json.js';
import { validateBody } from '../pipeline/validate-body.js';
import { channelsReport } from './channels-admin.js';
import { groupsReport } from './groups-admin.js';
import { consoleFile, consolePage, consoleRedirect } from './console-files.js';
import { configReport, reloadNow } from './config-admin.js';
import { ledgerReport } from './ledger-admin.js';
import { listAudit, listRequests } from './records-admin.js';
import { getTaskTimeline, listAllTasks } from './tasks-admin.js';
import { PLAYGROUND_BODY, playground } from './playground-admin.js';
import { healthz, readyz } from './health.js';
import { usageCsv, usageReport } from './usage-admin.js';
import {
  BUDGET_BODY,
  CREATE_TOKEN_BODY,
  createToken,
  deleteToken,
  disableToken,
  enableToken,
  EXPIRY_BODY,
  getToken,
  LIMITS_BODY,
  listTokens,
  QUOTA_BODY,
  setTokenBudget,
  setTokenExpiry,
  setTokenLimits,
  setTokenQuota,
} from './tokens-admin.js';
import {
  CHANGE_ENDPOINT_BODY,
  CREATE_ENDPOINT_BODY,
  createEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  removeEndpoint,
  resendDelivery,
  ROTATE_SECRET_BODY,
  rotateEndpoint,
  updateEndpoint,
} from './webhooks-admin.js';
import { ARCHIVE_DAYS_BODY, getTokenArchive, setTokenArchive } from './token-archive-admin.js';
import { ALLOWED_IPS_BODY, NAME_BODY, renameTokenRoute, ROTATE_BODY, rotateTokenRoute, setAllowedIpsRoute } from './token-keys-admin.js';

interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly matcher: PathMatcher;
  /** The JSON body the route takes; null: none (what is sent is drained). */
  readonly body: CompiledBody | null;
  /** A request sent with no body at all is taken as `{}` (a route whose every field is optional, like a rotation without grace). */
  readonly bodyOptional: boolean;
  readonly handle: (ctx: AdminContext) => Promise<AdminAnswer>;
  /** Answered without the admin key: probes that load balancers and orchestrators call, saying nothing secret. */
  readonly open: boolean;
}

const route = (
  method: AdminRoute['method'],
  path: string,
  handle: AdminRoute['handle'],
  opts: { body?: CompiledBody; bodyOptional?: boolean; open?: boolean } = {},
): AdminRoute => ({
  method,
  matcher: compilePathTemplate(path),
  body: opts.body ?? null,
  bodyOptional: opts.bodyOptional ?? false,
  handle,
  open: opts.open ?? false,
});

/** The operator routes (docs/operating.md, "Operating"). They are the engine's own, not routes.yaml's. */
const ADMIN_ROUTES: readonly AdminRoute[] = [
  route('GET', '/healthz', healthz, { open: true }),
  route('GET', '/readyz', readyz, { open: true }),
  // The public surface, as clients may already read it from routes.yaml: nothing secret in it.
  // The document's builder is loaded on the first ask: most gateways are never asked.
  route(
    'GET',
    '/openapi.json',
    async ({ snapshot }) => ({
      text: (await import('../openapi/openapi-document.js')).renderOpenApi(snapshot),
      contentType: 'application/json; charset=utf-8',
    }),
    { open: true },
  ),
  // The console's page and files need no key (nothing secret in them); everything they show comes
  // through the routes below, with the key the operator signs in with.
  route('GET', '/admin', consoleRedirect, { open: true }),
  route('GET', '/admin/', consolePage, { open: true }),
  route('GET', '/admin/console/{file}', consoleFile, { open: true }),
  route('GET', '/admin/channels', channelsReport),
  route('GET', '/admin/groups', groupsReport),
  route('GET', '/admin/config', configReport),
  route('POST', '/admin/reload', reloadNow),
  route('GET', '/admin/tokens', listTokens),
  route('POST', '/admin/tokens', createToken, { body: CREATE_TOKEN_BODY }),
  route('GET', '/admin/tokens/{token_id}', getToken),
  route('DELETE', '/admin/tokens/{token_id}', deleteToken),
  route('GET', '/admin/tokens/{token_id}/ledger', ledgerReport),
  route('POST', '/admin/tokens/{token_id}/disable', disableToken),
  route('POST', '/admin/tokens/{token_id}/enable', enableToken),
  route('POST', '/admin/tokens/{token_id}/quota', setTokenQuota, { body: QUOTA_BODY }),
  route('POST', '/admin/tokens/{token_id}/limits', setTokenLimits, { body: LIMITS_BODY }),
  route('POST', '/admin/tokens/{token_id}/expiry', setTokenExpiry, { body: EXPIRY_BODY }),
  route('POST', '/admin/tokens/{token_id}/budget', setTokenBudget, { body: BUDGET_BODY }),
  route('POST', '/admin/tokens/{token_id}/name', renameTokenRoute, { body: NAME_BODY }),
  route('POST', '/admin/tokens/{token_id}/rotate', rotateTokenRoute, { body: ROTATE_BODY, bodyOptional: true }),
  route('POST', '/admin/tokens/{token_id}/allowed-ips', setAllowedIpsRoute, { body: ALLOWED_IPS_BODY }),
  route('GET', '/admin/tokens/{token_id}/archive', getTokenArchive),
  route('POST', '/admin/tokens/{token_id}/archive', setTokenArchive, { body: ARCHIVE_DAYS_BODY }),
  route('GET', '/admin/usage', usageReport),
  route('GET', '/admin/usage.csv', usageCsv),
  route('GET', '/admin/tasks', listAllTasks),
  route('GET', '/admin/tasks/{task_id}', getTaskTimeline),
  route('GET', '/admin/requests', listRequests),
  route('GET', '/admin/audit', listAudit),
  route('POST', '/admin/playground', playground, { body: PLAYGROUND_BODY }),
  route('GET', '/admin/webhooks/endpoints', listEndpoints),
  route('POST', '/admin/webhooks/endpoints', createEndpoint, { body: CREATE_ENDPOINT_BODY }),
  route('GET', '/admin/webhooks/endpoints/{endpoint_id}', getEndpoint),
  route('POST', '/admin/webhooks/endpoints/{endpoint_id}', updateEndpoint, { body: CHANGE_ENDPOINT_BODY }),
  route('DELETE', '/admin/webhooks/endpoints/{endpoint_id}', removeEndpoint),
  route('POST', '/admin/webhooks/endpoints/{endpoint_id}/rotate', rotateEndpoint, { body: ROTATE_SECRET_BODY, bodyOptional: true }),
  route('GET', '/admin/webhooks/deliveries', listDeliveries),
  route('GET', '/admin/webhooks/deliveries/{delivery_id}', getDelivery),
  route('POST', '/admin/webhooks/deliveries/{delivery_id}/resend', resendDelivery),
  route('GET', '/metrics', async ({ deps }) => ({ text: await deps.metrics.text(), contentType: deps.metrics.contentType })),
];

const OPERATOR_PATHS = new Set(['/metrics', '/healthz', '/readyz', '/openapi.json']);

/** True for paths the admin router owns; they never reach routes.yaml matching. */
export function isAdminPath(pathname: string): boolean {
  return OPERATOR_PATHS.has(pathname) || pathname === '/admin' || pathname.startsWith('/admin/');
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Checks the admin key in constant time (hashes first, so lengths do not leak either). */
function checkAdminKey(req: IncomingMessage, adminKey: string | null): void {
  if (adminKey === null) throw new GatewayError('invalid_api_key', 'the admin routes are disabled; set GATEWAY_ADMIN_KEY to enable them');
  const h = req.headers.authorization;
  const sent = h && /^bearer\s+/i.test(h) ? h.replace(/^bearer\s+/i, '').trim() : '';
  if (sent === '' || !timingSafeEqual(digest(sent), digest(adminKey))) {
    throw new GatewayError('invalid_api_key', 'the admin routes take Authorization: Bearer <GATEWAY_ADMIN_KEY>');
  }
}

/** Serves one admin request; errors go to the caller's error boundary like any other. */
export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  search: URLSearchParams | null,
  snapshot: Snapshot,
  deps: AdminDeps,
  requestId: string,
): Promise<void> {
  const allowed: string[] = [];
  let found: { route: AdminRoute; params: Record<string, string> } | null = null;
  let open = false;
  for (const r of ADMIN_ROUTES) {
    const params = matchPath(r.matcher, pathname);
    if (!params) continue;
    open ||= r.open;
    if (r.method !== req.method) allowed.push(r.method);
    else found = { route: r, params };
  }
  // The key is checked before anything else is said, so a stranger cannot map the admin routes.
  if (!open) checkAdminKey(req, deps.adminKey);
  if (!found) {
    if (allowed.length > 0) throw methodNotAllowed(req.method ?? 'GET', allowed);
    throw new GatewayError('not_found', `no admin route for ${req.method} ${pathname.slice(0, 200)}`);
  }
  // A route that takes a body reads it within its small limit, and a bad one is invalid_request
  // naming the field; the others drain what was sent, so the connection stays usable.
  let body: unknown;
  if (found.route.body && found.route.bodyOptional && sentNoBody(req)) body = {};
  else if (found.route.body) {
    body = await readJsonBody(req, found.route.body);
    validateBody(found.route.body.validate, body);
  } else req.resume();
  const answer = await found.route.handle({ snapshot, params: found.params, query: search ?? new URLSearchParams(), body, deps });
  const [status, type, text] =
    'text' in answer
      ? [answer.status ?? 200, answer.contentType, answer.text]
      : [answer.status ?? 200, 'application/json; charset=utf-8', JSON.stringify(answer.json)];
  const extra = 'text' in answer ? answer.headers : undefined;
  res.writeHead(status, { ...extra, 'content-type': type, 'content-length': Buffer.byteLength(text), 'x-request-id': requestId, 'cache-control': 'no-store' });
  res.end(text);
}

/** A request with no body at all: no Content-Length (or 0) and no Transfer-Encoding, as `curl -X POST` sends it. */
function sentNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
}

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Snapshot } from './config/snapshot.js';
import { BodyBudget, defaultBodyBudget } from './http/body-budget.js';
import { drainUnread } from './http/drain-unread.js';
import { sendClientError, sendConnectRefused, sendError } from './http/error-boundary.js';
import { GatewayError } from './errors/gateway-error.js';
import { Authenticator } from './pipeline/authenticate.js';
import type { RequestContext } from './pipeline/context.js';
import { matchRoute } from './pipeline/match-route.js';
import { readJsonBody } from './pipeline/read-json.js';
import { runSyncOperation } from './pipeline/sync-operation.js';
import { validateBody } from './pipeline/validate-body.js';
import { checkFamily } from './pipeline/check-family.js';
import { ownedResources } from './pipeline/resources.js';
import type { Store } from './store/store.js';
import { runTaskContent } from './tasks/content.js';
import { Poller } from './tasks/poller.js';
import { runTaskQuery } from './tasks/query.js';
import { runTaskSubmit } from './tasks/submit.js';
import type { TaskDeps } from './tasks/task-deps.js';
import { newTaskId } from './tasks/task-id.js';
import { Pools } from './upstream/pools.js';
import { handleAdmin, isAdminPath } from './admin/admin-routes.js';
import type { ConfigControl } from './config/config-control.js';
import { Metrics } from './metrics/metrics.js';
import { RoutingState } from './routing/routing-state.js';
import { countQuotaUnits } from './quota/quota-metrics.js';
import { startHoldSweeper, sweepExpiredHolds } from './quota/hold-sweep.js';

/** What a gateway is built from. */
export interface GatewayOptions {
  /** The current snapshot; read once when each request starts. */
  readonly snapshot: () => Snapshot;
  readonly store: Store;
  readonly log: Logger;
  /** Golden runs: synchronous routes over asynchronous vendors look again at once (0) instead of the operation's interval. */
  readonly awaitIntervalMs?: number;
  /** Golden runs: overrides every channel's `polling.lost_after_ms` (0: one "no such task" answer shows the verdict). */
  readonly lostAfterMs?: number;
  /** Clock for `now` in mappings; golden runs fix it. */
  readonly clock?: () => Date;
  /** Random source for weighted channel choice; golden runs fix it. */
  readonly random?: () => number;
  /** Milliseconds an authenticated key stays cached. */
  readonly authCacheTtlMs?: number;
  /** Task ids; golden runs make them deterministic. */
  readonly newTaskId?: () => string;
  /**
   * False: no background work (no polling, no resume of tasks and no sweep of expired holds at
   * start); every task query asks the vendor (golden runs, where each vendor call must be one the
   * case recorded). Default true.
   */
  readonly poll?: boolean;
  /** The gateway's public base URL for download links (GATEWAY_PUBLIC_URL); default: from the request's Host. */
  readonly publicUrl?: string;
  /** GATEWAY_ADMIN_KEY: opens /admin/* and /metrics to `Authorization: Bearer <key>`; unset, they stay closed. */
  readonly adminKey?: string;
  /** Lets `POST /admin/reload` and `GET /admin/config` act on the configuration; absent for a fixed snapshot. */
  readonly config?: ConfigControl;
  /** The process's metrics, shared with whoever else reports (the config reloader); default: a fresh set. */
  readonly metrics?: Metrics;
  /** GATEWAY_BODY_BUDGET_MB: bytes of request bodies held at once; default: a share of the heap limit. */
  readonly bodyBudgetBytes?: number;
  /** GATEWAY_HEADERS_TIMEOUT_MS: a client's headers must arrive within this; default 30 s. */
  readonly headersTimeoutMs?: number;
  /** GATEWAY_REQUEST_TIMEOUT_MS: a client's whole request (headers and body) must arrive within this; default 300 s. */
  readonly requestTimeoutMs?: number;
}

/** How often Node looks for clients past their time (its default, 30 s, made a 300 s limit 330 s). */
const TIMEOUT_CHECK_MS = 1_000;

/** A running gateway: its HTTP server and how to stop it. */
export interface Gateway {
  readonly server: Server;
  /** The task poller (its stats feed the benchmark). */
  readonly poller: Poller;
  /** Upstream connection pools, by origin (a reload closes those no channel uses any more). */
  readonly pools: Pools;
  /** Live channel state: calls in flight and circuit breakers. */
  readonly routing: RoutingState;
  readonly metrics: Metrics;
  /** Request body bytes held at once, and their bound. */
  readonly bodies: BodyBudget;
  /** Resumes unfinished tasks, then starts listening; resolves with the bound port (0 picks a free one). */
  listen(port: number, host?: string): Promise<number>;
  /** Base URL once listening, e.g. http://127.0.0.1:41234 */
  url(): string;
  close(): Promise<void>;
}

function splitUrl(raw: string): { pathname: string; search: URLSearchParams | null } {
  const q = raw.indexOf('?');
  if (q === -1) return { pathname: raw, search: null };
  return { pathname: raw.slice(0, q), search: new URLSearchParams(raw.slice(q + 1)) };
}

function publicQuery(search: URLSearchParams | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!search) return out;
  // The key may travel in ?key=; it must never reach a mapping, a log or a vendor.
  for (const [k, v] of search) if (k !== 'key') out[k] = v;
  return out;
}

/** What the request handler learnt on the way, for the metrics and the error answer. */
interface Seen {
  /** Route id, never the raw path: a path is the client's to choose, a label set is not. */
  route: string;
  /** `100 Continue` was sent. */
  continued: boolean;
}

/** A client that waits for `100 Continue` before it sends its body. */
function expectsContinue(req: IncomingMessage): boolean {
  // The test Node itself uses to send such a request to 'checkContinue'.
  return /(?:^|\W)100-continue(?:$|\W)/i.test(String(req.headers.expect ?? ''));
}

/** Tells a waiting client to send its body (once). */
function sendContinue(req: IncomingMessage, res: ServerResponse, seen: { continued: boolean }): void {
  if (seen.continued || !expectsContinue(req)) return;
  seen.continued = true;
  res.writeContinue();
}

/** Builds the gateway: one request handler running the pipeline stages in order. */
export function createGateway(opts: GatewayOptions): Gateway {
  const pools = new Pools();
  let port = 0;
  const auth = new Authenticator(opts.store, opts.authCacheTtlMs);
  const clock = opts.clock ?? (() => new Date());
  const poll = opts.poll ?? true;
  const metrics = opts.metrics ?? new Metrics();
  const stopQuotaMetrics = countQuotaUnits(opts.store, metrics);
  const routing = new RoutingState(metrics, opts.snapshot, () => clock().getTime());
  const bodies = new BodyBudget(opts.bodyBudgetBytes ?? defaultBodyBudget());
  metrics.gauge('gateway_request_body_bytes', 'Request body bytes held now (reserved before reading), the most ever held at once, and the bound', ['of'], () => [
    [{ of: 'held' }, bodies.held],
    [{ of: 'peak' }, bodies.peak],
    [{ of: 'limit' }, bodies.limit],
  ]);
  const admin = { adminKey: opts.adminKey ?? null, metrics, store: opts.store, routing, config: opts.config ?? null };
  let stopSweeper: () => void = () => undefined;
  const poller = new Poller({ store: opts.store, pools, snapshot: opts.snapshot, log: opts.log, clock, random: opts.random, lostAfterMs: opts.lostAfterMs });
  if (!poll) poller.stop();
  const deps: TaskDeps = { store: opts.store, pools, random: opts.random, poller, newId: opts.newTaskId ?? newTaskId, refreshAlways: !poll, awaitIntervalMs: opts.awaitIntervalMs, lostAfterMs: opts.lostAfterMs, clock, routing, metrics };

  /** Where this client reached us: the configured public URL, else the Host it sent. */
  function publicBase(req: IncomingMessage): string {
    if (opts.publicUrl) return opts.publicUrl.replace(/\/+$/, '');
    const host = typeof req.headers.host === 'string' && /^[A-Za-z0-9.:[\]-]{1,300}$/.test(req.headers.host) ? req.headers.host : `127.0.0.1:${port}`;
    const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
    return `${proto}://${host}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string, seen: Seen): Promise<void> {
    const snapshot = opts.snapshot();
    const { pathname, search } = splitUrl(req.url ?? '/');
    if (isAdminPath(pathname)) {
      seen.route = 'admin';
      sendContinue(req, res, seen);
      return handleAdmin(req, res, pathname, search, snapshot, admin, requestId);
    }
    const { route, params } = matchRoute(snapshot, req.method ?? 'GET', pathname, search);
    seen.route = route.id;
    const token = await auth.authenticate(route.keySources, req.headers, search);
    let body: unknown;
    if (route.body) {
      // Room for the body is taken before a byte of it is read (and before a client waiting on
      // `Expect: 100-continue` is told to send it), so a burst of large bodies is refused at the door.
      const admission = bodies.admit(req, res, route.body.maxBytes);
      sendContinue(req, res, seen);
      body = await readJsonBody(req, route.body, admission);
    }
    if (route.body) validateBody(route.body.validate, body);
    const ctx: RequestContext = {
      requestId,
      snapshot,
      route,
      params,
      query: publicQuery(search),
      token,
      log: opts.log,
      now: clock(),
      // Only task answers carry download links: sync requests never pay for building it.
      get publicBase() {
        return publicBase(req);
      },
    };
    if (route.kind === 'task-content') return runTaskContent(ctx, req, res, deps);
    const warning = route.kind === 'sync' || route.kind === 'task-submit' ? await checkFamily(ctx, body) : null;
    // What the request reads or references must be the caller's; it then goes where that is held.
    const holder = await ownedResources(ctx, body, opts.store);
    const answer =
      route.kind === 'sync' ? await runSyncOperation(ctx, body, deps, holder)
      : route.kind === 'task-submit' ? await runTaskSubmit(ctx, body, deps, holder)
      : await runTaskQuery(ctx, body, deps);
    const text = JSON.stringify(answer);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-request-id': requestId,
      ...(warning ? { warning } : {}),
    });
    res.end(text);
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    const started = performance.now();
    const seen: Seen = { route: 'none', continued: false };
    res.once('finish', () => drainUnread(req));
    handle(req, res, requestId, seen)
      .catch((err: unknown) => {
        // Refused before it was told to send its body: the client will not send it, and the
        // connection must not wait for it.
        if (expectsContinue(req) && !seen.continued && !res.headersSent) res.setHeader('connection', 'close');
        sendError(res, err, opts.log, requestId);
      })
      .finally(() => {
        metrics.requests.inc({ route: seen.route, status: String(res.statusCode) });
        opts.log.debug({ req_id: requestId, method: req.method, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'request');
      });
  };
  const server = createServer({ maxHeaderSize: 16 * 1024, connectionsCheckingInterval: TIMEOUT_CHECK_MS }, onRequest);
  // Ours to answer: `100 Continue` goes out only once the body is admitted (see handle), so a
  // refused client never sends it. Node would otherwise say Continue to everyone at once.
  server.on('checkContinue', onRequest);
  server.on('clientError', sendClientError);
  server.on('connect', (_req: IncomingMessage, socket) => sendConnectRefused(socket));
  // `Expect: 100-continue` is answered by the handler (checkContinue above); any other expectation
  // gets our shape, not a bare 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const err = new GatewayError('invalid_request', `the Expect header ${JSON.stringify(String(req.headers.expect).slice(0, 100))} is not supported`, {
      headers: { connection: 'close' },
    });
    sendError(res, err, opts.log, randomUUID());
  });
  // A client that stalls while sending headers or body gets 408 and is cut off instead of holding a
  // socket (error-boundary.ts answers it, also when its handler is still waiting for the body).
  server.headersTimeout = opts.headersTimeoutMs ?? 30_000;
  server.requestTimeout = opts.requestTimeoutMs ?? 300_000;
  server.keepAliveTimeout = 65_000;

  return {
    server,
    poller,
    pools,
    routing,
    metrics,
    bodies,
    async listen(p, host = '127.0.0.1') {
      if (poll) {
        const resumed = await poller.resume();
        if (resumed > 0) opts.log.info({ tasks: resumed }, 'resumed unfinished tasks');
        // Holds of requests a crash cut off go back before the first new request can be refused for them.
        const given = await sweepExpiredHolds(opts.store, opts.log, clock().getTime());
        if (given > 0) opts.log.info({ holds: given }, 'gave back expired holds');
        stopSweeper = startHoldSweeper(opts.store, opts.log, clock);
      }
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(p, host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          resolve(port);
        });
      });
    },
    url: () => `http://127.0.0.1:${port}`,
    async close() {
      poller.stop();
      stopSweeper();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await pools.close();
      // After the drain: what requests finishing meanwhile moved is counted too.
      stopQuotaMetrics();
    },
  };
}

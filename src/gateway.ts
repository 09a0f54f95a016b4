import type { Server } from 'node:http';
import { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { handleAdmin, isAdminPath } from './admin/admin-routes.js';
import type { ConfigControl } from './config/config-control.js';
import type { Snapshot } from './config/snapshot.js';
import { BodyBudget, defaultBodyBudget } from './http/body-budget.js';
import { DEFAULT_DRAIN_MS, drainable } from './http/drain.js';
import type { CorsPolicy } from './http/cors.js';
import { createHttpServer } from './http/server.js';
import { type TlsFiles, type TlsPair, type TlsWatch, watchTls } from './http/tls.js';
import type { TrustProxy } from './http/trust-proxy.js';
import { healthOf, reportStore } from './admin/health.js';
import { KeyLimiter } from './live/key-limiter.js';
import { followReplicas } from './live/follow-replicas.js';
import { perProcess, type SharedLive } from './live/shared-live.js';
import { Metrics } from './metrics/metrics.js';
import type { RequestDeps } from './operations/deps.js';
import { serveRequests } from './operations/stages.js';
import { Authenticator } from './pipeline/authenticate.js';
import { HOLD_SWEEP_INTERVAL_MS, sweepExpiredHolds } from './quota/hold-sweep.js';
import { startSweeper } from './store/sweeper.js';
import { DEFAULT_LINK_TTL_MS } from './links/hand-out.js';
import { LINK_SWEEP_INTERVAL_MS, sweepExpiredLinks } from './links/link-sweep.js';
import { runLinkContent } from './operations/link-content.js';
import { countQuotaUnits } from './quota/quota-metrics.js';
import { RequestBatcher } from './records/request-batcher.js';
import { HoldEndings } from './quota/hold-endings.js';
import { adminActor, DEFAULT_AUDIT_DAYS } from './records/audit.js';
import { logRequests } from './records/request-log.js';
import { startPurge } from './records/purge-by-age.js';
import { RoutingState } from './routing/routing-state.js';
import type { Store } from './store/store.js';
import { DEFAULT_LEASE_MS, Poller, type LeaseSettings } from './tasks/poller.js';
import { reportTaskGauges } from './tasks/task-gauges.js';
import { newTaskId } from './tasks/task-id.js';
import { Pools } from './upstream/pools.js';
import { type ArchiveOptions, ResultArchive } from './archive/result-archive.js';
import { LastUsed } from './tokens/last-used.js';
import { Webhooks } from './webhooks/webhooks.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhooks/webhook-settings.js';

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
  /** How this replica shares tasks with others (GATEWAY_REPLICA_ID, GATEWAY_TASK_LEASE_MS); default: the only replica. */
  readonly lease?: LeaseSettings;
  /** What replicas share through Redis (GATEWAY_REDIS); default: nothing, every limit per process. The caller closes it. */
  readonly shared?: SharedLive;
  /** Milliseconds an authenticated key stays cached. */
  readonly authCacheTtlMs?: number;
  /** Task ids; golden runs make them deterministic. */
  readonly newTaskId?: () => string;
  /** GATEWAY_LINK_TTL_MS: how long a link handed out instead of a vendor URL serves; default an hour. */
  readonly linkTtlMs?: number;
  /** Link secrets; golden runs make them deterministic. */
  readonly newLinkSecret?: () => string;
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
  /** GATEWAY_DRAIN_MS: how long `close` lets requests in flight finish before cutting them; default 25 s. */
  readonly drainMs?: number;
  /** GATEWAY_TRUST_PROXY: the proxies believed for the client's address and the public origin; default nobody. */
  readonly trustProxy?: TrustProxy;
  /** GATEWAY_CORS_ORIGINS: the browser origins that may call the public routes; default none. */
  readonly cors?: CorsPolicy | null;
  /**
   * GATEWAY_TLS_CERT / GATEWAY_TLS_KEY: serve HTTPS with `pair` (read from `files`, checked), and
   * serve the pair the files hold whenever they change, `debounceMs` after the last change (default 200).
   */
  readonly tls?: { readonly files: TlsFiles; readonly pair: TlsPair; readonly debounceMs?: number };
  /**
   * GATEWAY_REQUEST_LOG_DAYS: days the request log keeps (default 7; 0: no request log); tests set
   * how often its batches are written and its old records swept.
   */
  readonly requestLog?: { readonly days: number; readonly flushMs?: number; readonly sweepMs?: number };
  /** GATEWAY_SETTLE_FLUSH_MS: longest a settlement waits to be written in a batch (default 200). */
  readonly settleFlushMs?: number;
  /** GATEWAY_AUDIT_DAYS: days the audit log keeps (default 365; 0: forever); tests set how often it is purged. */
  readonly audit?: { readonly days: number; readonly sweepMs?: number };
  /** Tests: how often the tokens' last uses due are written (default every 5 s; each token at most once a minute by `clock`). */
  readonly lastUsedTickMs?: number;
  /** GATEWAY_WEBHOOK_*: how webhook deliveries are sent and retried (docs/webhooks.md); default: the documented defaults. */
  readonly webhooks?: WebhookSettings;
  /** GATEWAY_ARCHIVE: the result archive's backend and settings (docs/archive.md); absent: no archive. */
  readonly archive?: ArchiveOptions;
}

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
  /** The request log's writer; null when GATEWAY_REQUEST_LOG_DAYS is 0. */
  readonly requestLog: RequestBatcher | null;
  /** Settlements and refunds of synchronous requests, written in batches after their answers. */
  readonly holdEndings: HoldEndings;
  /** The tokens' last uses noted and not yet written (docs/tokens-and-quota.md, "Last use"). */
  readonly lastUsed: LastUsed;
  /** Webhook deliveries: the worker and its settings. */
  readonly webhooks: Webhooks;
  /** The result archive; null without GATEWAY_ARCHIVE. */
  readonly archive: ResultArchive | null;
  /** Resumes unfinished tasks, then starts listening; resolves with the bound port (0 picks a free one). */
  listen(port: number, host?: string): Promise<number>;
  /** Base URL once listening, e.g. http://127.0.0.1:41234 (https:// when it serves TLS) */
  url(): string;
  /** Reads the TLS certificate files again now (SIGHUP); true when a new pair serves. False without TLS. */
  reloadTls(): boolean;
  /**
   * Stops: /readyz says 503 at once, no new connection is taken, requests in flight get up to
   * `drainMs` to finish (then their connections are cut), and the background work stops.
   */
  close(): Promise<void>;
}

/** Assembles the gateway: the HTTP server over the operations, the poller, the sweepers of expired holds and links, and their shared state. */
export function createGateway(opts: GatewayOptions): Gateway {
  const pools = new Pools();
  let port = 0;
  const clock = opts.clock ?? (() => new Date());
  const auth = new Authenticator(opts.store, opts.authCacheTtlMs, () => clock().getTime());
  const poll = opts.poll ?? true;
  const metrics = opts.metrics ?? new Metrics();
  const stopQuotaMetrics = countQuotaUnits(opts.store, metrics);
  const stopStoreReport = reportStore(opts.store, opts.log, metrics);
  const shared = opts.shared ?? perProcess;
  const routing = new RoutingState(metrics, opts.snapshot, () => clock().getTime(), shared);
  const { self, tokenChanged } = followReplicas(shared, auth, { config: opts.config ?? null, replica: opts.lease?.owner ?? 'local', snapshot: opts.snapshot });
  const bodies = new BodyBudget(opts.bodyBudgetBytes ?? defaultBodyBudget());
  metrics.gauge(
    'gateway_request_body_bytes',
    'Request body bytes held now (reserved before reading), the most ever held at once, and the bound',
    ['of'],
    () => [
      [{ of: 'held' }, bodies.held],
      [{ of: 'peak' }, bodies.peak],
      [{ of: 'limit' }, bodies.limit],
    ],
  );
  metrics.gauge(
    'gateway_channels_left_out',
    'Channels declared but not routed to (1 each), by channel and reason (disabled, unset_env)',
    ['channel', 'reason'],
    () => opts.snapshot().leftOut.map((c): [Record<string, string>, number] => [{ channel: c.name, reason: c.reason }, 1]),
  );
  const webhooks = new Webhooks({
    store: opts.store,
    snapshot: opts.snapshot,
    log: opts.log,
    metrics,
    settings: opts.webhooks ?? DEFAULT_WEBHOOK_SETTINGS,
    publicUrl: opts.publicUrl ?? null,
    owner: opts.lease?.owner,
    clock,
  });
  const holdEndings = new HoldEndings({ write: (e) => opts.store.endHolds(e), log: opts.log, metrics, flushMs: opts.settleFlushMs });
  const admin = {
    webhooks,
    // Read at request time, once `requests` (below) exists.
    health: { ...healthOf(opts.store, () => requests.draining), archiveUp: () => (archive ? archive.up : null) },
    adminKey: opts.adminKey ?? null,
    metrics,
    store: opts.store,
    routing,
    config: opts.config ?? null,
    shared,
    self,
    tokenChanged,
    writeHoldEndings: () => holdEndings.flush(),
    operator: opts.adminKey
      ? { store: opts.store, actor: adminActor(opts.adminKey), lost: (m: string) => opts.log.error(m), now: () => clock().getTime() }
      : null,
  };
  let stopSweepers: () => void = () => undefined;
  const logDays = opts.requestLog?.days ?? 7;
  const requestLog =
    logDays > 0 ? new RequestBatcher({ put: (r) => opts.store.putRequests(r), log: opts.log, metrics, flushMs: opts.requestLog?.flushMs }) : null;
  const lastUsed = new LastUsed({
    touch: (uses) => opts.store.touchTokens(uses),
    clock: () => clock().getTime(),
    log: opts.log,
    tickMs: opts.lastUsedTickMs,
  });
  const poller = new Poller({
    store: opts.store,
    pools,
    snapshot: opts.snapshot,
    log: opts.log,
    clock,
    random: opts.random,
    lostAfterMs: opts.lostAfterMs,
    lease: opts.lease,
    metrics,
  });
  if (!poll) poller.stop();
  reportTaskGauges(opts.store, poller, metrics, opts.log);
  const lease = { owner: opts.lease?.owner ?? `archive-${process.pid}-${Math.random().toString(36).slice(2, 8)}`, ms: opts.lease?.ms ?? DEFAULT_LEASE_MS };
  const archive = opts.archive ? new ResultArchive(opts.archive, { ...opts, pools, metrics, clock, lease, channelFor: (t) => poller.channelFor(t) }) : null;
  const deps: RequestDeps = {
    auth,
    keyLimits: new KeyLimiter(shared),
    lastUsed,
    store: opts.store,
    pools,
    random: opts.random,
    poller,
    newId: opts.newTaskId ?? newTaskId,
    linkTtlMs: opts.linkTtlMs ?? DEFAULT_LINK_TTL_MS,
    newLinkSecret: opts.newLinkSecret,
    refreshAlways: !poll,
    awaitIntervalMs: opts.awaitIntervalMs,
    lostAfterMs: opts.lostAfterMs,
    clock,
    routing,
    metrics,
    webhooks,
    archive,
    holdEndings,
  };

  const server = createHttpServer({
    snapshot: opts.snapshot,
    log: opts.log,
    metrics,
    bodies,
    clock,
    publicUrl: opts.publicUrl,
    trustProxy: opts.trustProxy,
    cors: opts.cors,
    tls: opts.tls?.pair,
    headersTimeoutMs: opts.headersTimeoutMs,
    requestTimeoutMs: opts.requestTimeoutMs,
    onFinished: requestLog ? logRequests(requestLog, clock) : undefined,
    handlers: {
      admin: {
        owns: isAdminPath,
        handle: (req, res, pathname, search, snapshot, requestId) => handleAdmin(req, res, pathname, search, snapshot, admin, requestId),
      },
      serve: serveRequests(deps),
      link: (req, res, link) => runLinkContent(req, res, link, deps),
    },
  });
  const requests = drainable(server);
  const tls = opts.tls;
  const certificates: TlsWatch | null = tls && server instanceof HttpsServer ? watchTls(server, tls.files, tls.pair, opts.log, tls.debounceMs ?? 200) : null;

  return {
    server,
    poller,
    pools,
    routing,
    metrics,
    bodies,
    requestLog,
    holdEndings,
    lastUsed,
    webhooks,
    archive,
    async listen(p, host = '127.0.0.1') {
      lastUsed.start();
      if (poll) {
        const resumed = await poller.resume();
        if (resumed > 0) opts.log.info({ tasks: resumed }, 'resumed unfinished tasks');
        // Holds of requests a crash cut off end before the first new request can be refused for them.
        const ended = await sweepExpiredHolds(opts.store, opts.log, clock().getTime());
        if (ended > 0) opts.log.info({ holds: ended }, 'ended expired holds');
        const holds = startSweeper('expired holds', (now) => sweepExpiredHolds(opts.store, opts.log, now), opts.log, clock, HOLD_SWEEP_INTERVAL_MS);
        const links = startSweeper('expired links', (now) => sweepExpiredLinks(opts.store, now), opts.log, clock, LINK_SWEEP_INTERVAL_MS);
        const old = startPurge(
          'old request log records',
          (before, limit) => opts.store.deleteRequestsBefore(before, limit),
          logDays,
          opts.log,
          clock,
          opts.requestLog?.sweepMs,
        );
        const oldAudit = startPurge(
          'old audit records',
          (before, limit) => opts.store.deleteAuditBefore(before, limit),
          opts.audit?.days ?? DEFAULT_AUDIT_DAYS,
          opts.log,
          clock,
          opts.audit?.sweepMs,
        );
        webhooks.start();
        await archive?.start();
        stopSweepers = () => {
          archive?.stop();
          holds();
          links();
          old();
          oldAudit();
        };
      }
      await routing.pullBreakers();
      shared.announce(self);
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(p, host, () => {
          server.off('error', reject);
          port = (server.address() as AddressInfo).port;
          resolve(port);
        });
      });
    },
    url: () => `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    reloadTls: () => certificates?.reload() ?? false,
    async close() {
      const deadlineMs = opts.drainMs ?? DEFAULT_DRAIN_MS;
      const started = performance.now();
      opts.log.info({ inflight: requests.inflight, deadline_ms: deadlineMs }, 'stopping: requests in flight may finish, no new ones are taken');
      poller.stop();
      stopSweepers();
      certificates?.close();
      const { cutOff } = await requests.drain(deadlineMs);
      // Past the deadline the vendor calls of the requests cut off are abandoned too (a submission
      // cut off this way is found and settled later: docs/deploying.md, "Tasks cut off by a crash").
      await pools.close(cutOff > 0);
      // After the drain: tasks submitted meanwhile are this replica's too.
      if (poll)
        await poller
          .releaseLeases()
          .catch((err: unknown) => opts.log.warn({ err }, 'could not give back task leases; other replicas take them when they run out'));
      // After the drain: the settlements of every request answered are written (or left to their holds' expiry).
      await holdEndings.close();
      // After the drain: the records of every request answered are written (or given up on).
      await requestLog?.close();
      // After the drain too: the last uses of every request answered.
      await lastUsed.close();
      // After the drain: the events of tasks ended meanwhile wait in the store for any replica.
      await webhooks.stop();
      await archive?.close();
      // After the drain: what requests finishing meanwhile moved is counted too.
      stopQuotaMetrics();
      stopStoreReport();
      const ms = Math.round(performance.now() - started);
      if (cutOff > 0) opts.log.warn({ ms, cut_off: cutOff }, 'stopped; the drain deadline cut off requests still in flight');
      else opts.log.info({ ms }, 'stopped; every request in flight finished');
    },
  };
}

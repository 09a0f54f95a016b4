import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { delimiter } from 'node:path';
import type { Logger } from 'pino';
import { LiveConfig } from './config/live-config.js';
import type { ChannelOverride } from './config/load.js';
import type { LeftOutChannel, Snapshot } from './config/snapshot.js';
import { createGateway, type Gateway } from './gateway.js';
import { parseCorsOrigins } from './http/cors.js';
import { DEFAULT_DRAIN_MS } from './http/drain.js';
import { readTlsPair, tlsFilesFrom } from './http/tls.js';
import { describeTrust, parseTrustProxy } from './http/trust-proxy.js';
import { perProcess, type SharedLive } from './live/shared-live.js';
import { DEFAULT_LINK_TTL_MS } from './links/hand-out.js';
import { DEFAULT_AUDIT_DAYS, type Operator } from './records/audit.js';
import { DEFAULT_SETTLE_FLUSH_MS } from './quota/hold-endings.js';
import { auditedReload, FILE_WATCH_ACTOR, SIGNAL_ACTOR } from './records/reload-audit.js';
import type { ReloadOutcome } from './config/config-control.js';
import { Metrics } from './metrics/metrics.js';
import { type ArchiveEnv, archiveFromEnv, openArchive } from './archive/archive-env.js';
import type { Simulator } from './sim/http.js';
import { maskedUrl } from './config/secret.js';
import { isSharedStore, openStore } from './store/open-store.js';
import { DEFAULT_LEASE_MS } from './tasks/poller.js';
import type { Store } from './store/store.js';
import { DEFAULT_STORE_TIMEOUTS, isStoreUnavailable, reasonOf, type StoreTimeouts } from './store/unavailable.js';
import { webhookSettingsFromEnv, type WebhookSettings } from './webhooks/webhook-settings.js';

/** Settings of a gateway process, from the environment (docs/operating.md, "Settings"). */
export interface AppSettings {
  readonly configDir: string;
  /** More config directories merged in (GATEWAY_CONFIG_EXTRA, separated by the path delimiter). */
  readonly extraConfigDirs: readonly string[];
  readonly storeUrl: string;
  readonly port: number;
  readonly host: string;
  /** The base URL clients reach the gateway at, for download links; null: taken from each request's Host. */
  readonly publicUrl: string | null;
  /** GATEWAY_ADMIN_KEY: opens /admin/* and /metrics; null keeps them closed. */
  readonly adminKey: string | null;
  /** GATEWAY_WATCH: reload when a config file changes (default on; `0` turns it off). */
  readonly watch: boolean;
  /** GATEWAY_RELOAD_DEBOUNCE_MS: quiet time after the last file change before a watched reload. */
  readonly reloadDebounceMs: number;
  /** GATEWAY_BODY_BUDGET_MB in bytes: request body bytes held at once; null: a share of the heap limit. NaN when malformed (refused at start). */
  readonly bodyBudgetBytes: number | null;
  /** GATEWAY_HEADERS_TIMEOUT_MS: a client's headers must arrive within this (NaN when malformed, refused at start). */
  readonly headersTimeoutMs: number;
  /** GATEWAY_REQUEST_TIMEOUT_MS: a client's whole request must arrive within this (NaN when malformed, refused at start). */
  readonly requestTimeoutMs: number;
  /** GATEWAY_REPLICA_ID: this replica's name on task leases; null: a random one per process. */
  readonly replicaId: string | null;
  /** GATEWAY_TASK_LEASE_MS: how long a task stays with a replica that stopped renewing (NaN when malformed, refused at start). */
  readonly taskLeaseMs: number;
  /** GATEWAY_REDIS: where replicas share live state (redis://…); null: nothing shared, every limit per process. */
  readonly redisUrl: string | null;
  /** GATEWAY_REDIS_PREFIX: the start of every key and channel this gateway uses in Redis. */
  readonly redisPrefix: string;
  /** GATEWAY_AUTH_CACHE_MS: how long a key's lookup is trusted; null: 5000 on the embedded store, 1000 on a shared one (NaN when malformed). */
  readonly authCacheMs: number | null;
  /** GATEWAY_STRICT: refuse to start (or reload) while any enabled channel lacks a variable, instead of leaving it out. */
  readonly strict: boolean;
  /** GATEWAY_DRAIN_MS: how long a stop waits for requests in flight before closing their connections (NaN when malformed). */
  readonly drainMs: number;
  /** GATEWAY_LINK_TTL_MS: how long a link handed out instead of a vendor URL serves (NaN when malformed, refused at start). */
  readonly linkTtlMs: number;
  /** GATEWAY_REQUEST_LOG_DAYS: days the request log keeps its records; 0: no request log (NaN when malformed, refused at start). */
  readonly requestLogDays: number;
  /** GATEWAY_AUDIT_DAYS: days the audit log keeps its records; 0: forever (NaN when malformed, refused at start). */
  readonly auditDays: number;
  /** GATEWAY_SETTLE_FLUSH_MS: how long a settlement may wait to be written with others (NaN when malformed, refused at start). */
  readonly settleFlushMs: number;
  /**
   * GATEWAY_DB_CONNECT_TIMEOUT_MS, GATEWAY_DB_STATEMENT_TIMEOUT_MS, GATEWAY_DB_IDLE_TX_TIMEOUT_MS:
   * the bounds on waiting for a shared store (NaN when malformed, refused by openConfiguredStore).
   */
  readonly storeTimeouts: StoreTimeouts;
  /** GATEWAY_STORE_THREAD: the embedded store's statements and commits on a thread of their own, off the event loop (default on). */
  readonly storeThread: boolean;
  /** GATEWAY_TLS_CERT, GATEWAY_TLS_KEY: PEM files of the certificate and key to serve HTTPS with; both null: HTTP. Checked at start. */
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** GATEWAY_TRUST_PROXY as written (http/trust-proxy.ts reads it at start); null: believe no proxy. */
  readonly trustProxy: string | null;
  /** GATEWAY_CORS_ORIGINS as written (http/cors.ts reads it at start); null: no CORS. */
  readonly corsOrigins: string | null;
  /** GATEWAY_WEBHOOK_*: read from the environment at start when absent (a malformed one stops the start). */
  readonly webhooks?: WebhookSettings;
  /** GATEWAY_ARCHIVE and its companions (docs/archive.md); null: no archive. Checked at start. */
  readonly archive?: ArchiveEnv | null;
}

/** Reads process settings from the environment, with the documented defaults. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env, defaults: Partial<AppSettings> = {}): AppSettings {
  return {
    configDir: env.GATEWAY_CONFIG_DIR ?? defaults.configDir ?? process.cwd(),
    extraConfigDirs: env.GATEWAY_CONFIG_EXTRA ? env.GATEWAY_CONFIG_EXTRA.split(delimiter).filter(Boolean) : (defaults.extraConfigDirs ?? []),
    storeUrl: env.GATEWAY_DB ?? defaults.storeUrl ?? 'data/gateway.db',
    port: env.PORT !== undefined ? Number(env.PORT) : (defaults.port ?? 8080),
    host: env.HOST ?? defaults.host ?? '0.0.0.0',
    publicUrl: env.GATEWAY_PUBLIC_URL ?? defaults.publicUrl ?? null,
    adminKey: env.GATEWAY_ADMIN_KEY || (defaults.adminKey ?? null),
    watch: env.GATEWAY_WATCH !== undefined ? !/^(0|false|no|off)$/i.test(env.GATEWAY_WATCH.trim()) : (defaults.watch ?? true),
    reloadDebounceMs: debounce(env.GATEWAY_RELOAD_DEBOUNCE_MS, defaults.reloadDebounceMs ?? 200),
    bodyBudgetBytes: env.GATEWAY_BODY_BUDGET_MB ? Math.floor(Number(env.GATEWAY_BODY_BUDGET_MB) * 1024 * 1024) : (defaults.bodyBudgetBytes ?? null),
    headersTimeoutMs: env.GATEWAY_HEADERS_TIMEOUT_MS ? Number(env.GATEWAY_HEADERS_TIMEOUT_MS) : (defaults.headersTimeoutMs ?? 30_000),
    requestTimeoutMs: env.GATEWAY_REQUEST_TIMEOUT_MS ? Number(env.GATEWAY_REQUEST_TIMEOUT_MS) : (defaults.requestTimeoutMs ?? 300_000),
    replicaId: env.GATEWAY_REPLICA_ID || (defaults.replicaId ?? null),
    taskLeaseMs: env.GATEWAY_TASK_LEASE_MS ? Number(env.GATEWAY_TASK_LEASE_MS) : (defaults.taskLeaseMs ?? DEFAULT_LEASE_MS),
    redisUrl: env.GATEWAY_REDIS || (defaults.redisUrl ?? null),
    redisPrefix: env.GATEWAY_REDIS_PREFIX || (defaults.redisPrefix ?? 'gateway:'),
    authCacheMs: env.GATEWAY_AUTH_CACHE_MS ? Number(env.GATEWAY_AUTH_CACHE_MS) : (defaults.authCacheMs ?? null),
    strict: env.GATEWAY_STRICT !== undefined ? /^(1|true|yes|on)$/i.test(env.GATEWAY_STRICT.trim()) : (defaults.strict ?? false),
    drainMs: env.GATEWAY_DRAIN_MS ? Number(env.GATEWAY_DRAIN_MS) : (defaults.drainMs ?? DEFAULT_DRAIN_MS),
    linkTtlMs: env.GATEWAY_LINK_TTL_MS ? Number(env.GATEWAY_LINK_TTL_MS) : (defaults.linkTtlMs ?? DEFAULT_LINK_TTL_MS),
    requestLogDays: env.GATEWAY_REQUEST_LOG_DAYS ? Number(env.GATEWAY_REQUEST_LOG_DAYS) : (defaults.requestLogDays ?? 7),
    auditDays: env.GATEWAY_AUDIT_DAYS ? Number(env.GATEWAY_AUDIT_DAYS) : (defaults.auditDays ?? DEFAULT_AUDIT_DAYS),
    settleFlushMs: env.GATEWAY_SETTLE_FLUSH_MS ? Number(env.GATEWAY_SETTLE_FLUSH_MS) : (defaults.settleFlushMs ?? DEFAULT_SETTLE_FLUSH_MS),
    storeTimeouts: {
      connectMs: env.GATEWAY_DB_CONNECT_TIMEOUT_MS
        ? Number(env.GATEWAY_DB_CONNECT_TIMEOUT_MS)
        : (defaults.storeTimeouts?.connectMs ?? DEFAULT_STORE_TIMEOUTS.connectMs),
      statementMs: env.GATEWAY_DB_STATEMENT_TIMEOUT_MS
        ? Number(env.GATEWAY_DB_STATEMENT_TIMEOUT_MS)
        : (defaults.storeTimeouts?.statementMs ?? DEFAULT_STORE_TIMEOUTS.statementMs),
      idleInTransactionMs: env.GATEWAY_DB_IDLE_TX_TIMEOUT_MS
        ? Number(env.GATEWAY_DB_IDLE_TX_TIMEOUT_MS)
        : (defaults.storeTimeouts?.idleInTransactionMs ?? DEFAULT_STORE_TIMEOUTS.idleInTransactionMs),
    },
    storeThread: env.GATEWAY_STORE_THREAD !== undefined ? !/^(0|false|no|off)$/i.test(env.GATEWAY_STORE_THREAD.trim()) : (defaults.storeThread ?? true),
    tlsCertFile: env.GATEWAY_TLS_CERT || (defaults.tlsCertFile ?? null),
    tlsKeyFile: env.GATEWAY_TLS_KEY || (defaults.tlsKeyFile ?? null),
    trustProxy: env.GATEWAY_TRUST_PROXY ?? defaults.trustProxy ?? null,
    corsOrigins: env.GATEWAY_CORS_ORIGINS ?? defaults.corsOrigins ?? null,
    archive: archiveFromEnv(env) ?? defaults.archive ?? null,
  };
}

/** A bound in ms read from the environment: whole, within [min, max]; else an error naming the variable. */
function checkMs(name: string, value: number, min: number, max: number): void {
  if (!(Number.isInteger(value) && value >= min && value <= max)) throw new Error(`${name} must be whole milliseconds from ${min} to ${max}`);
}

/**
 * Opens the store of GATEWAY_DB with the settings' bounds on waiting for it. A store that cannot
 * be reached (refused, silent past the connect timeout, a password refused) is an error that names
 * GATEWAY_DB, its password masked, and says why, for `gateway start` to print before exiting 2.
 * The embedded store is opened on its own thread (GATEWAY_STORE_THREAD) unless `command`: a CLI
 * command's few calls open it in-process.
 */
export async function openConfiguredStore(settings: AppSettings, opts: { command?: boolean } = {}): Promise<Store> {
  const t = settings.storeTimeouts;
  checkMs('GATEWAY_DB_CONNECT_TIMEOUT_MS', t.connectMs, 100, 600_000);
  checkMs('GATEWAY_DB_STATEMENT_TIMEOUT_MS', t.statementMs, 100, 3_600_000);
  checkMs('GATEWAY_DB_IDLE_TX_TIMEOUT_MS', t.idleInTransactionMs, 100, 3_600_000);
  try {
    // A command (tokens, webhooks, groups) makes a few calls and exits: no thread to start for it.
    return await openStore(settings.storeUrl, { timeouts: t, thread: settings.storeThread && opts.command !== true });
  } catch (err) {
    const where = `GATEWAY_DB=${maskedUrl(settings.storeUrl)}`;
    if (isStoreUnavailable(err)) {
      throw new Error(
        `${where}: the store could not be reached (${reasonOf(err)}); connecting waits at most ${t.connectMs} ms (GATEWAY_DB_CONNECT_TIMEOUT_MS)`,
      );
    }
    throw new Error(`${where}: ${(err as Error).message}`);
  }
}

/** A debounce in ms from the environment: a whole number from 0 to 60000, else the default. */
function debounce(raw: string | undefined, fallback: number): number {
  const n = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 && n <= 60_000 ? n : fallback;
}

/** A running gateway process: the gateway, its configuration, its store and any simulators started for it. */
export interface App {
  readonly gateway: Gateway;
  /** The configuration: reloads, status, swaps. */
  readonly config: LiveConfig;
  /** The snapshot serving now. */
  readonly snapshot: Snapshot;
  readonly store: Store;
  readonly simulators: readonly Simulator[];
  readonly port: number;
  /** Reloads the configuration on SIGHUP, recorded in the audit log as the `signal`'s. */
  reloadOnSignal(): Promise<ReloadOutcome>;
  close(): Promise<void>;
}

/**
 * Starts a gateway. With `simulate`, every channel whose `${ENV}` credentials are unset is pointed
 * at an in-process simulator of its profile (demo mode); without it, such a channel is left out
 * and reported (GATEWAY_STRICT: the load fails instead).
 */
export async function startApp(settings: AppSettings, log: Logger, opts: { simulate: boolean; store?: Store }): Promise<App> {
  const budget = settings.bodyBudgetBytes;
  if (budget !== null && !(Number.isSafeInteger(budget) && budget > 0)) throw new Error('GATEWAY_BODY_BUDGET_MB must be a number of megabytes greater than 0');
  const { headersTimeoutMs: headers, requestTimeoutMs: whole } = settings;
  if (!(Number.isInteger(headers) && headers >= 1_000 && headers <= 3_600_000))
    throw new Error('GATEWAY_HEADERS_TIMEOUT_MS must be whole milliseconds from 1000 to 3600000');
  if (!(Number.isInteger(whole) && whole >= headers && whole <= 3_600_000))
    throw new Error('GATEWAY_REQUEST_TIMEOUT_MS must be whole milliseconds, at least GATEWAY_HEADERS_TIMEOUT_MS and at most 3600000');
  const lease = settings.taskLeaseMs;
  if (!(Number.isInteger(lease) && lease >= 300 && lease <= 600_000)) throw new Error('GATEWAY_TASK_LEASE_MS must be whole milliseconds from 300 to 600000');
  const authCache = settings.authCacheMs;
  if (authCache !== null && !(Number.isInteger(authCache) && authCache >= 0 && authCache <= 600_000))
    throw new Error('GATEWAY_AUTH_CACHE_MS must be whole milliseconds from 0 to 600000');
  if (settings.redisUrl !== null && !/^rediss?:\/\//.test(settings.redisUrl)) throw new Error('GATEWAY_REDIS must be a redis:// or rediss:// URL');
  if (!(Number.isInteger(settings.drainMs) && settings.drainMs >= 0 && settings.drainMs <= 600_000))
    throw new Error('GATEWAY_DRAIN_MS must be whole milliseconds from 0 to 600000');
  const linkTtl = settings.linkTtlMs;
  if (!(Number.isInteger(linkTtl) && linkTtl >= 60_000 && linkTtl <= 604_800_000))
    throw new Error('GATEWAY_LINK_TTL_MS must be whole milliseconds from 60000 (a minute) to 604800000 (a week)');
  const logDays = settings.requestLogDays;
  if (!(Number.isInteger(logDays) && logDays >= 0 && logDays <= 3650))
    throw new Error('GATEWAY_REQUEST_LOG_DAYS must be whole days from 0 (no request log) to 3650');
  const auditDays = settings.auditDays;
  if (!(Number.isInteger(auditDays) && auditDays >= 0 && auditDays <= 36_500))
    throw new Error('GATEWAY_AUDIT_DAYS must be whole days from 0 (keep forever) to 36500');
  const settleFlushMs = settings.settleFlushMs;
  if (!(Number.isInteger(settleFlushMs) && settleFlushMs >= 10 && settleFlushMs <= 60_000))
    throw new Error('GATEWAY_SETTLE_FLUSH_MS must be whole milliseconds from 10 to 60000');
  const trustProxy = parseTrustProxy(settings.trustProxy ?? undefined);
  const cors = parseCorsOrigins(settings.corsOrigins ?? undefined);
  // Read and checked before anything starts: a certificate that cannot serve stops the start, not the first handshake.
  const tlsFiles = tlsFilesFrom(settings.tlsCertFile, settings.tlsKeyFile);
  const tls = tlsFiles === null ? undefined : { files: tlsFiles, pair: readTlsPair(tlsFiles), debounceMs: settings.reloadDebounceMs };
  const replica = settings.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const sharedStore = isSharedStore(settings.storeUrl);
  const simulators: Simulator[] = [];
  let shared: SharedLive = perProcess;
  let override: ChannelOverride | undefined;
  if (opts.simulate) {
    const byProfile = new Map<string, Simulator>();
    // Loaded for the demo only: a gateway in front of real vendors carries no simulator code.
    const { SIMULATORS } = await import('./sim/registry.js');
    for (const [profile, start] of Object.entries(SIMULATORS)) {
      const sim = await start();
      byProfile.set(profile, sim);
      simulators.push(sim);
    }
    // Reloads run the override again: say which channel a simulator serves once, not per reload.
    const told = new Set<string>();
    override = (channel, missing) => {
      if (missing.length === 0) return null;
      const sim = byProfile.get(channel.profile);
      if (!sim) return null;
      if (!told.has(channel.name))
        log.info({ channel: channel.name, profile: channel.profile, simulator: sim.url }, 'channel has no credentials; served by a simulator');
      told.add(channel.name);
      return { base_url: sim.url, secrets: { ...sim.secrets } };
    };
  }
  try {
    // `/metrics` is served only with the admin key.
    const metrics = new Metrics({ served: settings.adminKey !== null });
    const config = LiveConfig.open({
      dir: settings.configDir,
      // The demo serves a simulator where credentials lack: nothing is missing for it to be strict about.
      load: { overrideChannel: override, strict: settings.strict && !opts.simulate, extraDirs: settings.extraConfigDirs },
      log,
      metrics,
      debounceMs: settings.reloadDebounceMs,
    });
    for (const c of config.current().leftOut) logLeftOut(log, c);
    const store = opts.store ?? (await openConfiguredStore(settings));
    const archive = settings.archive ? await openArchive(settings.archive) : undefined;
    // Without an archive, completed tasks queue no copies (one that was configured before is let go).
    if (!archive) await store.setArchiveOn(false);
    // ioredis is loaded only when Redis is configured (a few MB a single process never needs).
    shared =
      settings.redisUrl === null
        ? perProcess
        : await (await import('./live/redis-live.js')).RedisLive.open({ url: settings.redisUrl, prefix: settings.redisPrefix, replica, log, metrics });
    const gateway = createGateway({
      webhooks: settings.webhooks ?? webhookSettingsFromEnv(process.env),
      snapshot: () => config.current(),
      store,
      log,
      publicUrl: settings.publicUrl ?? undefined,
      adminKey: settings.adminKey ?? undefined,
      config,
      metrics,
      bodyBudgetBytes: budget ?? undefined,
      headersTimeoutMs: headers,
      requestTimeoutMs: whole,
      drainMs: settings.drainMs,
      linkTtlMs: linkTtl,
      requestLog: { days: logDays },
      audit: { days: auditDays },
      settleFlushMs,
      trustProxy,
      cors,
      tls,
      lease: {
        owner: replica,
        ms: lease,
        // Only the scale-out store is shared: the embedded one belongs to this process.
        soleReplica: !sharedStore,
      },
      shared,
      // Replicas that share a store see each other's token changes: through Redis at once, else within this.
      authCacheTtlMs: authCache ?? (sharedStore ? 1_000 : 5_000),
      archive,
    });
    connectReloads(config, gateway, log);
    const port = await gateway.listen(settings.port, settings.host);
    if (tls) log.info({ subject: tls.pair.subject, valid_to: tls.pair.validTo }, 'serving HTTPS; the certificate files are watched');
    if (trustProxy.kind !== 'none') log.info({ trust_proxy: describeTrust(trustProxy) }, 'X-Forwarded-For, -Proto and -Host are believed from these proxies');
    if (cors) log.info({ cors_origins: cors.any ? '*' : [...cors.origins] }, 'browsers of these origins may call the public routes');
    // Reloads other than an admin's (which its route records) are recorded as the signal's or the watcher's.
    const operator = (actor: string): Operator => ({ store, actor, lost: (m) => log.error(m) });
    if (settings.watch) config.watch(() => void auditedReload(config, operator(FILE_WATCH_ACTOR), 'watch', replica));
    return {
      gateway,
      config,
      get snapshot() {
        return config.current();
      },
      store,
      simulators,
      port,
      reloadOnSignal: () => auditedReload(config, operator(SIGNAL_ACTOR), 'SIGHUP', replica),
      async close() {
        config.close();
        await gateway.close();
        await shared.close();
        await store.close();
        await Promise.all(simulators.map((s) => s.close()));
      },
    };
  } catch (err) {
    await shared.close();
    await Promise.all(simulators.map((s) => s.close()));
    throw err;
  }
}

/**
 * What follows every swap: channel state and connection pools of channels the new snapshot no
 * longer has are let go, except the pools tasks pinned to an older definition still need.
 */
export function connectReloads(config: LiveConfig, gateway: Gateway, log: Logger): void {
  config.onSwap((next, previous) => {
    // Said once per change, not at every reload a watched edit makes.
    const before = new Map(previous.leftOut.map((c) => [c.name, c.reason]));
    for (const c of next.leftOut) if (before.get(c.name) !== c.reason) logLeftOut(log, c);
    const now = new Set(next.leftOut.map((c) => c.name));
    for (const name of before.keys()) if (!now.has(name) && next.channelsByName.has(name)) log.info({ channel: name }, 'channel serves again');
    gateway.routing.prune(next);
    gateway.pools.prune(next, gateway.poller.pinnedChannels()).then(
      (closed) => {
        if (closed > 0) log.info({ pools: closed }, 'closed connection pools no channel uses any more');
      },
      (err: unknown) => log.warn({ err: (err as Error).message }, 'closing unused connection pools failed'),
    );
  });
}

/** One line per channel left out of routing, with what would bring it in. */
function logLeftOut(log: Logger, c: LeftOutChannel): void {
  if (c.reason === 'disabled') log.info({ channel: c.name, at: c.at }, 'channel left out: enabled: false');
  else log.warn({ channel: c.name, at: c.at, unset: c.unset }, `channel left out: ${c.unset.join(', ')} not set (GATEWAY_STRICT=1 refuses to start instead)`);
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { CompiledChannel, Snapshot, SyncRoute } from '../config/snapshot.js';
import { DependencyAway, type DependencyGate } from '../dependencies/dependency-gate.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ArchiveAnswer, ArchivedFiles, ServeIds } from '../operations/deps.js';
import type { ArchiveTotals, LinkRecord, Store, TaskRecord } from '../store/store.js';
import { startSweeper } from '../store/sweeper.js';
import type { Pools } from '../upstream/pools.js';
import { archiveGate } from './archive-gate.js';
import { type ArchiveBackend, ArchiveMissing } from './backend.js';
import { ArchiveCopier, type CopierSettings } from './copier.js';
import { purgeArchive } from './purge.js';
import { keepDaysFor } from './retention.js';
import { serveArchived } from './serve-archived.js';

/** The archive's settings (docs/operating.md, docs/archive.md). */
export interface ArchiveSettings {
  /** GATEWAY_ARCHIVE_KEEP_DAYS: days a file is kept when neither its route nor its token says. */
  readonly keepDays: number;
  /** GATEWAY_ARCHIVE_MAX_MB, in bytes: the largest file copied. */
  readonly maxBytes: number;
  /** GATEWAY_ARCHIVE_COPIES, GATEWAY_ARCHIVE_ATTEMPTS. */
  readonly copies: number;
  readonly attempts: number;
  /**
   * GATEWAY_ARCHIVE_TIMEOUT_MS: the most a download waits for the archive's answer before it goes
   * to the vendor (and the archive is away); default 10 s.
   */
  readonly timeoutMs?: number;
  /** GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS: a copy that moves no byte this long is cut and tried again; default 30 s. */
  readonly idleTimeoutMs?: number;
  /** Tests: how often the archive is asked whether it is back while away (default 1 s). */
  readonly probeEveryMs?: number;
  /** Tests: how often jobs are claimed (default 2 s), the first retry's delay (default 30 s), the purge's period (default an hour). */
  readonly tickMs?: number;
  readonly retryMs?: number;
  readonly purgeMs?: number;
  /** Tests: how long the gauges trust the store's totals (default 30 s). */
  readonly totalsMs?: number;
}

/** What the archive is built from. */
export interface ArchiveOptions {
  readonly backend: ArchiveBackend;
  readonly settings: ArchiveSettings;
}

/** Defaults of GATEWAY_ARCHIVE_KEEP_DAYS, _MAX_MB, _COPIES, _ATTEMPTS, _S3_CONNECT_TIMEOUT_MS, _TIMEOUT_MS, _IDLE_TIMEOUT_MS. */
export const ARCHIVE_DEFAULTS = {
  keepDays: 7,
  maxMb: 4096,
  copies: 2,
  attempts: 8,
  s3ConnectTimeoutMs: 3_000,
  timeoutMs: 10_000,
  idleTimeoutMs: 30_000,
} as const;

/** How often gauges read the store's totals at most: a scrape never scans the archive's records each time. */
const TOTALS_MS = 30_000;

/**
 * The result archive (docs/archive.md): copies the files of completed tasks, and of links of
 * routes that ask for it, into a backend (./backend.ts) in the background (./copier.ts), serves
 * downloads from it once a copy is done (and from the vendor until then), and purges files past
 * their retention. Made by the gateway when GATEWAY_ARCHIVE is set.
 */
export class ResultArchive implements ArchivedFiles {
  readonly #store: Store;
  readonly #backend: ArchiveBackend;
  readonly #settings: ArchiveSettings;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #copier: ArchiveCopier;
  readonly #gate: DependencyGate;
  readonly #fallbacks: Counter<'reason'>;
  /** The backend's get as a download calls it: through the gate, within its budget. */
  readonly #reach: Pick<ArchiveBackend, 'get'>;
  #stopPurge: () => void = () => undefined;

  constructor(
    opts: ArchiveOptions,
    deps: {
      readonly store: Store;
      readonly pools: Pools;
      readonly snapshot: () => Snapshot;
      readonly channelFor: (task: TaskRecord) => CompiledChannel | undefined;
      readonly log: Logger;
      readonly metrics: Metrics;
      readonly clock: () => Date;
      readonly lease: { readonly owner: string; readonly ms: number };
    },
  ) {
    this.#store = deps.store;
    this.#backend = opts.backend;
    this.#settings = opts.settings;
    this.#log = deps.log;
    this.#now = () => deps.clock().getTime();
    const copies = new Counter({
      name: 'gateway_archive_copies_total',
      help: 'Archive copy jobs by outcome: done (every file copied), retry (an attempt failed), failed (given up)',
      labelNames: ['outcome'] as const,
      registers: [deps.metrics.registry],
    });
    this.#fallbacks = new Counter({
      name: 'gateway_archive_fallbacks_total',
      help: 'Downloads of archived files served by the vendor instead, by reason: away (the archive did not answer), missing (the file was not there)',
      labelNames: ['reason'] as const,
      registers: [deps.metrics.registry],
    });
    const s = opts.settings;
    this.#gate = archiveGate(opts.backend, {
      log: deps.log,
      metrics: deps.metrics,
      timeoutMs: s.timeoutMs ?? ARCHIVE_DEFAULTS.timeoutMs,
      probeEveryMs: s.probeEveryMs,
      onBack: () => this.#copier.tick(),
    });
    const gate = this.#gate;
    this.#reach = { get: (key, range) => gate.run((signal) => opts.backend.get(key, range, signal)) };
    const settings: CopierSettings = {
      owner: deps.lease.owner,
      leaseMs: deps.lease.ms,
      copies: s.copies,
      attempts: s.attempts,
      tickMs: s.tickMs ?? 2_000,
      retryMs: s.retryMs ?? 30_000,
      idleMs: s.idleTimeoutMs ?? ARCHIVE_DEFAULTS.idleTimeoutMs,
    };
    this.#copier = new ArchiveCopier(
      {
        store: deps.store,
        backend: opts.backend,
        pools: deps.pools,
        snapshot: deps.snapshot,
        channelFor: deps.channelFor,
        now: this.#now,
        keepDays: s.keepDays,
        maxBytes: s.maxBytes,
        log: deps.log,
        outcome: (o) => copies.inc({ outcome: o }),
        archive: {
          up: () => gate.up,
          // Asked after a copy failed: an archive that does not answer its probe is away (and the copy waits for it).
          check: () =>
            gate
              .run((signal) => opts.backend.probe(signal))
              .then(
                () => gate.up,
                () => false,
              ),
        },
      },
      settings,
    );
    this.#gauges(deps.metrics);
  }

  /** Says so in the store (completions queue copies from now on), then starts copying and purging. */
  async start(): Promise<void> {
    await this.#store.setArchiveOn(true);
    this.#copier.start();
    const every = this.#settings.purgeMs ?? 3_600_000;
    this.#stopPurge = startSweeper(
      'the archive',
      // While the archive is away there is nothing to purge it with; the next purge does it.
      (now) => (this.#gate.up ? purgeArchive(this.#store, this.#backend, now, this.#log) : Promise.resolve(0)),
      this.#log,
      () => new Date(this.#now()),
      every,
    );
    this.#log.info({ archive: this.#backend.where, kind: this.#backend.kind, keep_days: this.#settings.keepDays }, 'result archive on');
  }

  /** Stops copying (copies under way are aborted and done again later) and purging. */
  stop(): void {
    this.#copier.stop();
    this.#stopPurge();
  }

  /** Runs one purge now (tests, the CLI). */
  purge(): Promise<number> {
    return purgeArchive(this.#store, this.#backend, this.#now(), this.#log);
  }

  /** Copies under way on this replica. */
  get copying(): number {
    return this.#copier.running;
  }

  /** Whether the archive answers (gateway_archive_up): away, downloads go to the vendor and no copy starts. */
  get up(): boolean {
    return this.#gate.up;
  }

  async close(): Promise<void> {
    this.stop();
    this.#gate.close();
    await this.#backend.close();
  }

  async linkKeepDays(route: SyncRoute, tokenId: string): Promise<number> {
    if (route.archive === null || route.archive.keepDays === 0) return 0;
    return keepDaysFor('link', route, await this.#store.getTokenArchiveDays(tokenId), this.#settings.keepDays);
  }

  serveTask(req: IncomingMessage, res: ServerResponse, task: TaskRecord, index: number, ids: ServeIds): Promise<ArchiveAnswer> {
    return this.#serve(req, res, task.id, index, ids);
  }

  serveLink(req: IncomingMessage, res: ServerResponse, link: LinkRecord, ids: ServeIds): Promise<ArchiveAnswer> {
    const maxAge = Math.max(0, Math.floor((link.expiresAt - this.#now()) / 1000));
    return this.#serve(req, res, link.id, 0, ids, { 'cache-control': `private, max-age=${maxAge}` });
  }

  /**
   * Serves an archived file, or says why not: not archived, or the archive unavailable (away already:
   * the vendor is asked at once, the archive not; or its answer failed as an outage or ran past
   * GATEWAY_ARCHIVE_TIMEOUT_MS, which marks it away). Nothing is written unless it was served.
   */
  async #serve(req: IncomingMessage, res: ServerResponse, owner: string, index: number, ids: ServeIds, extra?: Record<string, string>): Promise<ArchiveAnswer> {
    const file = await this.#store.getArchivedFile(owner, index, this.#now());
    if (!file) return 'not_archived';
    const logged = { req_id: ids.requestId, key: file.key };
    if (!this.#gate.up) {
      this.#fallbacks.inc({ reason: 'away' });
      ids.log.info(logged, 'the result archive is away; asking the vendor');
      return 'unavailable';
    }
    try {
      await serveArchived(req, res, this.#reach, file, ids, extra);
      return 'served';
    } catch (err) {
      if (res.headersSent) throw err;
      // Lost behind the gateway's back, or purged this instant: the vendor may still have it.
      if (err instanceof ArchiveMissing) {
        this.#fallbacks.inc({ reason: 'missing' });
        ids.log.warn(logged, 'an archived file is missing; asking the vendor');
        return 'not_archived';
      }
      if (err instanceof DependencyAway) {
        this.#fallbacks.inc({ reason: 'away' });
        ids.log.warn({ ...logged, err: err.message }, 'the result archive did not serve an archived file; asking the vendor');
        return 'unavailable';
      }
      throw err;
    }
  }

  /** Bytes and files held, jobs queued and given up, copies under way: read from the store at most every 30 s. */
  #gauges(metrics: Metrics): void {
    let cached: { at: number; totals: ArchiveTotals } | null = null;
    const totals = async () => {
      if (cached === null || this.#now() - cached.at > (this.#settings.totalsMs ?? TOTALS_MS))
        cached = { at: this.#now(), totals: await this.#store.archiveTotals() };
      return cached.totals;
    };
    metrics.asyncGauge('gateway_archive_bytes', 'Bytes of result files held in the archive', [], async () => [[{}, (await totals()).bytes]]);
    metrics.asyncGauge('gateway_archive_files', 'Result files held in the archive', [], async () => [[{}, (await totals()).files]]);
    metrics.asyncGauge('gateway_archive_jobs', 'Archive copy jobs by state: queued (due or under way), failed (given up)', ['state'], async () => {
      const t = await totals();
      return [
        [{ state: 'queued' }, t.queued],
        [{ state: 'failed' }, t.failed],
      ];
    });
    metrics.gauge('gateway_archive_copying', 'Archive copies under way on this replica', [], () => [[{}, this.#copier.running]]);
  }
}

import type { Logger } from 'pino';
import type { ArchiveJob } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { type CopyDeps, CopyRefused, copyJob } from './copy-job.js';

/** How the copier shares and paces its work. */
export interface CopierSettings {
  /** This replica's name on job leases (the task leases' owner), and how long a lease lasts. */
  readonly owner: string;
  readonly leaseMs: number;
  /** Copies under way at once on this replica (GATEWAY_ARCHIVE_COPIES). */
  readonly copies: number;
  /** Failed attempts before a job is given up (GATEWAY_ARCHIVE_ATTEMPTS). */
  readonly attempts: number;
  /** How often the store is asked for jobs due; the first retry waits `retryMs`, each next one twice as long (at most an hour). */
  readonly tickMs: number;
  readonly retryMs: number;
  /** A copy streaming a file in which no byte moved this long is cut, and counts as a failed attempt (GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS). */
  readonly idleMs: number;
}

/** The archive's availability as the copier sees it (its DependencyGate). */
export interface ArchiveReach {
  /** Whether the archive answers: while it is away, no copy is claimed (an outage burns no attempts). */
  up(): boolean;
  /** Asks it (its probe, within its budget) after a copy failed; whether it is up. */
  check(): Promise<boolean>;
}

/** What the copier needs besides a copy's own needs. */
export type CopierDeps = CopyDeps & {
  readonly log: Logger;
  readonly outcome: (o: CopyOutcome) => void;
  readonly archive: ArchiveReach;
};

/** A copy under way: how to cut it, whether a file is streaming, and when its bytes last moved. */
interface Running {
  readonly abort: AbortController;
  streaming: boolean;
  movedAt: number;
}

/** Why a copy in which nothing moved was cut: a failed attempt, retried (unlike a stop or a lost lease). */
class CopyStalled extends Error {
  constructor(ms: number) {
    super(`no byte of the copy moved for ${ms} ms (GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS)`);
  }
}

/** What the copier tells the metrics: each job's outcome. */
export type CopyOutcome = 'done' | 'retry' | 'failed';

const MAX_RETRY_MS = 3_600_000;

/**
 * Copies the files of completed tasks (and archived links) into the archive, in the background:
 * every `tickMs` it claims due jobs up to its free slots (GATEWAY_ARCHIVE_COPIES), leased to this
 * replica as tasks are (a replica that dies leaves its jobs to the others once the lease runs
 * out; a copy it had half written is never served and is done again), renews the leases of the
 * copies under way, and retries a failed copy later with a doubling delay, giving it up after
 * GATEWAY_ARCHIVE_ATTEMPTS attempts. Nothing here changes a task: a copy that fails leaves the
 * download asking the vendor, as without an archive.
 *
 * A copy never sticks: one streaming a file in which no byte moved for `idleMs` keeps no lease and
 * is cut, a failed attempt like any other. While the archive is away (its gate) no copy is claimed;
 * a copy that failed while it was away is due again at once, so it is claimed when the archive is back.
 */
export class ArchiveCopier {
  readonly #deps: CopierDeps;
  readonly #s: CopierSettings;
  readonly #running = new Map<string, Running>();
  #claiming = false;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  #renewTimer: NodeJS.Timeout | null = null;
  #watchTimer: NodeJS.Timeout | null = null;

  constructor(deps: CopierDeps, settings: CopierSettings) {
    this.#deps = deps;
    this.#s = settings;
  }

  /** Copies under way on this replica. */
  get running(): number {
    return this.#running.size;
  }

  /** Starts claiming (at once, then every tickMs) and renewing. */
  start(): void {
    this.#timer = setInterval(() => this.tick(), this.#s.tickMs);
    this.#timer.unref();
    this.#renewTimer = setInterval(() => void this.#renew(), Math.max(100, Math.floor(this.#s.leaseMs / 3)));
    this.#renewTimer.unref();
    this.#watchTimer = setInterval(() => this.#watch(), Math.max(50, Math.min(1_000, Math.floor(this.#s.idleMs / 4))));
    this.#watchTimer.unref();
    this.tick();
  }

  /** Stops claiming and aborts the copies under way (their jobs are retried when their leases run out). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    if (this.#watchTimer) clearInterval(this.#watchTimer);
    for (const r of this.#running.values()) r.abort.abort(new Error('the gateway is stopping'));
  }

  /** Claims what is due, as far as there are free slots and the archive is up; a claim already under way is not doubled. */
  tick(): void {
    const free = this.#s.copies - this.#running.size;
    if (this.#stopped || this.#claiming || free <= 0 || !this.#deps.archive.up()) return;
    this.#claiming = true;
    const now = this.#deps.now();
    this.#deps.store
      .claimArchiveJobs(this.#s.owner, now, now + this.#s.leaseMs, free)
      .then((jobs) => {
        for (const job of jobs) this.#run(job);
      })
      .catch((err: unknown) => this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err: (err as Error).message }, 'claiming archive copies failed'))
      .finally(() => {
        this.#claiming = false;
      });
  }

  #run(job: ArchiveJob): void {
    const abort = new AbortController();
    const running: Running = { abort, streaming: false, movedAt: performance.now() };
    this.#running.set(job.id, running);
    const { log, store } = this.#deps;
    const started = this.#deps.now();
    const progress = {
      streaming(on: boolean) {
        running.streaming = on;
        running.movedAt = performance.now();
      },
      moved() {
        running.movedAt = performance.now();
      },
    };
    copyJob(job, this.#deps, abort.signal, progress)
      .then(
        async (files) => {
          await store.finishArchiveJob(job.id, this.#s.owner);
          this.#deps.outcome('done');
          if (files > 0) log.info({ [job.kind]: job.id, files, ms: this.#deps.now() - started }, 'archived result files');
        },
        async (err: unknown) => {
          // Stopped, or the lease lost: not this replica's attempt to count. A stalled copy is one.
          const stalled = abort.signal.reason instanceof CopyStalled;
          if (abort.signal.aborted && !stalled) return;
          const attempts = job.attempts + 1;
          const failed = err instanceof CopyRefused || attempts >= this.#s.attempts;
          // A copy that failed while the archive is away is due again as soon as it is back.
          const away = !failed && !(await this.#deps.archive.check());
          const delay = away ? 0 : Math.min(MAX_RETRY_MS, this.#s.retryMs * 2 ** job.attempts);
          const message = stalled ? (abort.signal.reason as Error).message : ((err as Error).message ?? String(err));
          await store.retryArchiveJob(job.id, this.#s.owner, this.#deps.now() + delay, message, failed);
          this.#deps.outcome(failed ? 'failed' : 'retry');
          log.warn(
            { [job.kind]: job.id, attempts, err: message, ...(failed ? {} : away ? { retry: 'once the archive is back' } : { retry_in_ms: delay }) },
            failed ? 'archive copy given up; downloads keep asking the vendor' : 'archive copy failed; it is tried again',
          );
        },
      )
      .catch((err: unknown) =>
        log.warn({ [job.kind]: job.id, err: (err as Error).message }, 'recording an archive copy failed; its lease runs out and it is done again'),
      )
      .finally(() => {
        this.#running.delete(job.id);
        this.tick();
      });
  }

  /** Cuts the copies streaming a file in which nothing moved for the idle timeout (a failed attempt each). */
  #watch(): void {
    const now = performance.now();
    for (const r of this.#running.values())
      if (r.streaming && now - r.movedAt > this.#s.idleMs && !r.abort.signal.aborted) r.abort.abort(new CopyStalled(this.#s.idleMs));
  }

  /**
   * Renews the leases of the copies under way that make progress (one stalled is not kept: if it is
   * not cut in time, another replica takes it once the lease runs out); one lost (taken by another
   * replica after it ran out) is aborted here.
   */
  async #renew(): Promise<void> {
    const now = performance.now();
    const ids = [...this.#running].filter(([, r]) => !r.streaming || now - r.movedAt <= this.#s.idleMs).map(([id]) => id);
    if (ids.length === 0 || this.#stopped) return;
    try {
      const held = new Set(await this.#deps.store.renewArchiveLeases(this.#s.owner, ids, this.#deps.now() + this.#s.leaseMs));
      for (const id of ids) if (!held.has(id)) this.#running.get(id)?.abort.abort(new Error('the lease of this copy was lost'));
    } catch (err) {
      this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err: (err as Error).message }, 'renewing archive copy leases failed');
    }
  }
}

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
 */
export class ArchiveCopier {
  readonly #deps: CopyDeps & { readonly log: Logger; readonly outcome: (o: CopyOutcome) => void };
  readonly #s: CopierSettings;
  readonly #running = new Map<string, AbortController>();
  #claiming = false;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  #renewTimer: NodeJS.Timeout | null = null;

  constructor(deps: CopyDeps & { readonly log: Logger; readonly outcome: (o: CopyOutcome) => void }, settings: CopierSettings) {
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
    this.tick();
  }

  /** Stops claiming and aborts the copies under way (their jobs are retried when their leases run out). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    for (const abort of this.#running.values()) abort.abort(new Error('the gateway is stopping'));
  }

  /** Claims what is due, as far as there are free slots; a claim already under way is not doubled. */
  tick(): void {
    const free = this.#s.copies - this.#running.size;
    if (this.#stopped || this.#claiming || free <= 0) return;
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
    this.#running.set(job.id, abort);
    const { log, store } = this.#deps;
    const started = this.#deps.now();
    copyJob(job, this.#deps, abort.signal)
      .then(
        async (files) => {
          await store.finishArchiveJob(job.id, this.#s.owner);
          this.#deps.outcome('done');
          if (files > 0) log.info({ [job.kind]: job.id, files, ms: this.#deps.now() - started }, 'archived result files');
        },
        async (err: unknown) => {
          if (abort.signal.aborted) return;
          const attempts = job.attempts + 1;
          const failed = err instanceof CopyRefused || attempts >= this.#s.attempts;
          const delay = Math.min(MAX_RETRY_MS, this.#s.retryMs * 2 ** job.attempts);
          const message = (err as Error).message ?? String(err);
          await store.retryArchiveJob(job.id, this.#s.owner, this.#deps.now() + delay, message, failed);
          this.#deps.outcome(failed ? 'failed' : 'retry');
          log.warn(
            { [job.kind]: job.id, attempts, err: message, ...(failed ? {} : { retry_in_ms: delay }) },
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

  /** Renews the leases of the copies under way; one lost (taken by another replica after it ran out) is aborted here. */
  async #renew(): Promise<void> {
    const ids = [...this.#running.keys()];
    if (ids.length === 0 || this.#stopped) return;
    try {
      const held = new Set(await this.#deps.store.renewArchiveLeases(this.#s.owner, ids, this.#deps.now() + this.#s.leaseMs));
      for (const id of ids) if (!held.has(id)) this.#running.get(id)?.abort(new Error('the lease of this copy was lost'));
    } catch (err) {
      this.#deps.log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err: (err as Error).message }, 'renewing archive copy leases failed');
    }
  }
}

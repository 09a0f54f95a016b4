import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Metrics } from '../metrics/metrics.js';
import type { RequestRecord } from '../store/store.js';
import { OutageLog } from '../store/outage-log.js';

/** How the request log is written (docs/admin-and-metrics.md, "The request log"). */
export interface BatcherOptions {
  /** Writes one batch (Store.putRequests): all or none, a batch sent again kept once. */
  readonly put: (records: readonly RequestRecord[]) => Promise<void>;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** A batch is written once this many records wait; default 500. */
  readonly maxBatch?: number;
  /** …or this long after the first of them arrived; default 1 s. */
  readonly flushMs?: number;
  /** Records held at most (a batch being written included); past it a new record is dropped; default 20,000. */
  readonly maxBuffered?: number;
  /** Writes of one batch before it is dropped; default 3 (each `flushMs` apart). */
  readonly maxAttempts?: number;
}

/**
 * The request log's writer: requests hand it their record as they end (`add`, synchronous, never
 * failing, no store call), and it writes them in batches off the request path, one batch at a time.
 * The buffer is bounded, so a store that is away costs memory up to the bound and no more: a batch
 * that failed `maxAttempts` times is dropped, as is a record that finds the buffer full; both are
 * counted (`gateway_request_log_dropped_total`) and logged once per run of failures.
 */
export class RequestBatcher {
  readonly #put: BatcherOptions['put'];
  readonly #maxBatch: number;
  readonly #flushMs: number;
  readonly #maxBuffered: number;
  readonly #maxAttempts: number;
  readonly #dropped: Counter<'reason'>;
  readonly #written: Counter;
  #waiting: RequestRecord[] = [];
  /** The batch being written (or failed and waiting for its next try), and its tries so far. */
  #batch: { records: RequestRecord[]; attempts: number } | null = null;
  #writing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** Whether drops were logged since the last batch written: logged once, not per batch. */
  readonly #outage: OutageLog;
  #closed = false;

  constructor(opts: BatcherOptions) {
    this.#put = opts.put;
    this.#outage = new OutageLog(opts.log, 'the request log is written again');
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#flushMs = opts.flushMs ?? 1_000;
    this.#maxBuffered = opts.maxBuffered ?? 20_000;
    this.#maxAttempts = opts.maxAttempts ?? 3;
    this.#dropped = new Counter({
      name: 'gateway_request_log_dropped_total',
      help: 'Request log records dropped, by reason: store (a batch failed every try) or full (the buffer was full)',
      labelNames: ['reason'] as const,
      registers: [opts.metrics.registry],
    });
    this.#written = new Counter({
      name: 'gateway_request_log_written_total',
      help: 'Request log records written to the store',
      registers: [opts.metrics.registry],
    });
  }

  /** Records held now, waiting or being written. */
  get buffered(): number {
    return this.#waiting.length + (this.#batch?.records.length ?? 0);
  }

  /** Takes a finished request's record; never waits, never throws. */
  add(record: RequestRecord): void {
    if (this.#closed) return;
    if (this.buffered >= this.#maxBuffered) {
      this.#dropped.inc({ reason: 'full' });
      this.#outage.warn('the request log buffer is full: records are dropped until the store takes them');
      return;
    }
    this.#waiting.push(record);
    if (this.#waiting.length >= this.#maxBatch && this.#batch === null) void this.flush();
    else this.#arm();
  }

  /** Writes what waits now (a batch in a try), resolving when that try ended; never rejects. */
  flush(): Promise<void> {
    if (this.#writing) return this.#writing;
    if (this.#batch === null) {
      if (this.#waiting.length === 0) return Promise.resolve();
      this.#batch = { records: this.#waiting.splice(0, this.#maxBatch), attempts: 0 };
    }
    const batch = this.#batch;
    this.#writing = this.#try(batch).finally(() => {
      this.#writing = null;
      // More than a batch waited, or a failed batch awaits its next try.
      if (!this.#closed && this.buffered > 0) {
        if (this.#batch === null && this.#waiting.length >= this.#maxBatch) void this.flush();
        else this.#arm();
      }
    });
    return this.#writing;
  }

  /** Stops taking records and writes what is held (each batch given its tries at once). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    while (this.buffered > 0) await this.flush();
  }

  async #try(batch: { records: RequestRecord[]; attempts: number }): Promise<void> {
    batch.attempts++;
    try {
      await this.#put(batch.records);
      this.#written.inc(batch.records.length);
      this.#batch = null;
      this.#outage.written();
    } catch (err) {
      if (batch.attempts < this.#maxAttempts) return;
      this.#batch = null;
      this.#dropped.inc({ reason: 'store' }, batch.records.length);
      this.#outage.warn(`request log records were dropped: the store did not take them in ${this.#maxAttempts} tries`, err);
    }
  }

  /** The next write, `flushMs` from now, unless one is already due. */
  #arm(): void {
    if (this.#timer !== null || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, this.#flushMs);
    this.#timer.unref();
  }
}

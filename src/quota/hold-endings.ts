import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../metrics/metrics.js';
import type { HoldEnd, HoldEnding } from '../store/store.js';
import { OutageLog } from '../store/outage-log.js';

/** How hold endings are written (docs/tokens-and-quota.md, "When the quota moves"). */
export interface HoldEndingsOptions {
  /** Writes one batch (Store.endHolds): safe to run again with the same endings. */
  readonly write: (endings: readonly HoldEnding[]) => Promise<HoldEnd[]>;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** A settlement is written at most this long after it was made (GATEWAY_SETTLE_FLUSH_MS); default 200 ms. */
  readonly flushMs?: number;
  /** Endings per store call; default 500. */
  readonly maxBatch?: number;
  /** Endings held at most; past it an ending is left to the hold's expiry (counted); default 100,000. */
  readonly maxBuffered?: number;
}

/** GATEWAY_SETTLE_FLUSH_MS's default: what a crash can lose (docs/tokens-and-quota.md) against a store call per batch. */
export const DEFAULT_SETTLE_FLUSH_MS = 200;

/** The longest wait between two tries of a batch the store refused. */
const MAX_BACKOFF_MS = 5_000;

/**
 * The writer of synchronous requests' hold endings, off the request path (issue 41): a request that
 * settles or refunds hands its ending over (`end`, synchronous, never failing) and its answer
 * leaves at once; the endings are written in batches, one store call at a time. The only write a
 * request waits for is its hold.
 *
 * A settlement waits up to `flushMs` for others to join it; a refund's write starts at once (the
 * batch written then takes the settlements waiting too), since the units it gives back may be what
 * the client's next request needs. A batch the store
 * refuses is tried again (backing off up to 5 s) until it is written: an ending is never dropped
 * while the buffer has room, so a store that was away settles every request it missed once it is
 * back. What a crash loses is what was still held here: those holds end at their expiry, settled
 * when the request log recorded their answer, else refunded (src/quota/hold-sweep.ts).
 */
export class HoldEndings {
  readonly #write: HoldEndingsOptions['write'];
  readonly #log: Logger;
  readonly #flushMs: number;
  readonly #maxBatch: number;
  readonly #maxBuffered: number;
  readonly #dropped: Counter;
  #waiting: HoldEnding[] = [];
  /** The batch being written, or refused and waiting for its next try. */
  #batch: HoldEnding[] | null = null;
  #tries = 0;
  #writing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #timerDue = 0;
  readonly #outage: OutageLog;
  #closed = false;

  constructor(opts: HoldEndingsOptions) {
    this.#write = opts.write;
    this.#log = opts.log;
    this.#outage = new OutageLog(opts.log, 'hold endings are written again');
    this.#flushMs = opts.flushMs ?? DEFAULT_SETTLE_FLUSH_MS;
    this.#maxBatch = opts.maxBatch ?? 500;
    this.#maxBuffered = opts.maxBuffered ?? 100_000;
    const held = () => this.held;
    new Gauge({
      name: 'gateway_hold_endings_pending',
      help: 'Settlements and refunds of synchronous requests made and not yet written to the store (a crash leaves them to the expiry of their holds)',
      registers: [opts.metrics.registry],
      collect() {
        this.set(held());
      },
    });
    this.#dropped = new Counter({
      name: 'gateway_hold_endings_dropped_total',
      help: 'Hold endings not kept because the buffer was full: each hold ends at its expiry instead',
      registers: [opts.metrics.registry],
    });
  }

  /** Endings held now, waiting or being written. */
  get held(): number {
    return this.#waiting.length + (this.#batch?.length ?? 0);
  }

  /** Takes a hold's ending; never waits, never throws. After `close` it is written at once, alone. */
  end(ending: HoldEnding): void {
    if (this.held >= this.#maxBuffered) {
      this.#dropped.inc();
      this.#outage.warn('hold endings are left to their expiry: too many wait for the store');
      return;
    }
    this.#waiting.push(ending);
    // A refund's write starts now (with the settlements waiting), so the units are back before the
    // client can read its answer and ask again; the answer still does not wait for it.
    if (this.#closed || ending.outcome === 'refund') void this.flush();
    else this.#arm(this.#waiting.length >= this.#maxBatch ? 0 : this.#flushMs);
  }

  /** Writes what is held now, one try per batch; resolves once those tries ended; never rejects. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#batch === null) {
      if (this.#waiting.length === 0) return;
      this.#batch = this.#waiting.splice(0, this.#maxBatch);
      this.#tries = 0;
    }
    const batch = this.#batch;
    this.#writing = this.#try(batch).finally(() => {
      this.#writing = null;
      if (this.held > 0 && !this.#closed) this.#arm(this.#batch === null ? this.#dueIn() : this.#backoff());
    });
    await this.#writing;
  }

  /**
   * Writes everything held, each batch given `tries` tries at once (the drain is over: nothing new
   * arrives but the endings of requests cut off); what the store still refuses is logged and left
   * to the holds' expiry.
   */
  async close(tries = 3): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    let refused = 0;
    while (this.held > 0 && refused < tries) {
      const before = this.held;
      await this.flush();
      refused = this.held < before ? 0 : refused + 1;
    }
    if (this.held > 0)
      this.#log.error(
        { holds: this.held },
        'stopped with hold endings unwritten: those holds end at their expiry (refunded unless the request log has their answer)',
      );
  }

  async #try(batch: HoldEnding[]): Promise<void> {
    this.#tries++;
    try {
      const ends = await this.#write(batch);
      this.#batch = null;
      batch.forEach((e, i) => {
        // The sweep gave this hold back for a request that could not finish, yet it did: it was charged
        // again, so the ledger shows the refund and the new debit and still balances.
        if (ends[i] === 'charged') this.#log.warn({ ref: e.ref, token: e.tokenId, price: e.amount }, 'a request outlived its hold; charged again');
      });
      this.#outage.written();
    } catch (err) {
      this.#outage.warn('hold endings wait: the store did not take them; trying again', err);
    }
  }

  /** When the oldest waiting ending is due: at once if a refund or a full batch waits. */
  #dueIn(): number {
    return this.#waiting.length >= this.#maxBatch || this.#waiting.some((e) => e.outcome === 'refund') ? 0 : this.#flushMs;
  }

  #backoff(): number {
    return Math.min(MAX_BACKOFF_MS, this.#flushMs * 2 ** Math.min(this.#tries, 10));
  }

  /** The next write `ms` from now, unless one is due sooner. */
  #arm(ms: number): void {
    if (this.#writing) return;
    const due = Date.now() + ms;
    if (this.#timer !== null) {
      if (this.#timerDue <= due) return;
      clearTimeout(this.#timer);
    }
    this.#timerDue = due;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, ms);
    this.#timer.unref();
  }
}

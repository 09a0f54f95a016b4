/**
 * A channel's calls and failures over the last five minutes, in ten 30 s buckets: the recent error
 * rate an operator reads (GET /admin/channels, the console). The breaker keeps its own counts under
 * its own policy; this one is the same for every channel, and costs two array writes per call.
 */
export class RecentCalls {
  static readonly BUCKET_MS = 30_000;
  static readonly BUCKETS = 10;
  readonly #calls = new Uint32Array(RecentCalls.BUCKETS);
  readonly #failures = new Uint32Array(RecentCalls.BUCKETS);
  /** The 30 s period the newest bucket counts. */
  #period = -Infinity;

  record(now: number, failed: boolean): void {
    const i = this.#advance(now);
    this.#calls[i] = (this.#calls[i] ?? 0) + 1;
    if (failed) this.#failures[i] = (this.#failures[i] ?? 0) + 1;
  }

  /** Calls and failures of the last `BUCKETS × BUCKET_MS`. */
  totals(now: number): { calls: number; failures: number } {
    this.#advance(now);
    let calls = 0;
    let failures = 0;
    for (const n of this.#calls) calls += n;
    for (const n of this.#failures) failures += n;
    return { calls, failures };
  }

  /** Empties the buckets of the periods passed since the last write; returns the current one's index. */
  #advance(now: number): number {
    const period = Math.floor(now / RecentCalls.BUCKET_MS);
    if (period > this.#period) {
      const passed = Math.min(period - this.#period, RecentCalls.BUCKETS);
      for (let k = 0; k < passed; k++) {
        const i = (period - k) % RecentCalls.BUCKETS;
        this.#calls[i] = 0;
        this.#failures[i] = 0;
      }
      this.#period = period;
    }
    return period % RecentCalls.BUCKETS;
  }
}

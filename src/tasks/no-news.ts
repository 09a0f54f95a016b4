/**
 * The poller's memory of looks that gave no news about a task, in two runs per task (docs/client-api.md, "The
 * poller"). Memory only: a restart starts both again, which can only make the gateway wait longer.
 *
 * - A `lost` run: the vendor's own "no such task" answers, since the first of an unbroken run. Any
 *   other answer about the task ends it; failed looks (a 5xx, a proxy's 404) neither end nor extend
 *   it, since they say nothing about the task.
 * - A miss run: failed looks in a row that did not pause the channel (answers no mapping
 *   recognises), each doubling the wait before the next look.
 */
export class NoNews {
  readonly #lostSince = new Map<string, number>();
  readonly #misses = new Map<string, number>();

  /** A look answered something other than `lost`: both runs end. */
  news(id: string): void {
    this.#lostSince.delete(id);
    this.#misses.delete(id);
  }

  /**
   * A look answered `lost` at `now`: true once the run has lasted `windowMs` (the task is lost),
   * false while the window runs. Either way the answer ends a miss run.
   */
  lost(id: string, now: number, windowMs: number): { readonly verdict: boolean; readonly forMs: number } {
    this.#misses.delete(id);
    const since = this.#lostSince.get(id) ?? now;
    this.#lostSince.set(id, since);
    return { verdict: now - since >= windowMs, forMs: now - since };
  }

  /** A look failed without pausing the channel: how many intervals to wait before the next (1, 2, 4 …). */
  missed(id: string): number {
    const misses = (this.#misses.get(id) ?? 0) + 1;
    this.#misses.set(id, misses);
    return 2 ** Math.min(misses - 1, 20);
  }

  /** The task is no longer followed. */
  forget(id: string): void {
    this.#lostSince.delete(id);
    this.#misses.delete(id);
  }
}

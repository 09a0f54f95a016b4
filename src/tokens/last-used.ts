/**
 * When each token was last used (docs/tokens-and-quota.md, "Last use"), kept without a store write
 * per request: each process notes the last use of every token in memory, and writes what it noted
 * in one batched statement (Store.touchTokens, which only moves the time forward), at most once per
 * token per TOUCH_GAP_MS, off the request path, and whatever is left when it stops.
 */
import type { Logger } from 'pino';
import type { TokenUse } from '../store/store.js';

/** The least time between two writes of one token's last use. */
export const TOUCH_GAP_MS = 60_000;
/** How often what is due is written. */
export const TOUCH_TICK_MS = 5_000;

/** What the notes are written with and timed by. */
export interface LastUsedOptions {
  /** Writes a batch (Store.touchTokens). */
  readonly touch: (uses: readonly TokenUse[]) => Promise<void>;
  readonly clock: () => number;
  readonly log: Pick<Logger, 'warn'>;
  /** Default TOUCH_GAP_MS. */
  readonly gapMs?: number;
  /** Default TOUCH_TICK_MS; tests shorten it. */
  readonly tickMs?: number;
}

/** The last uses of tokens this process saw and has not written yet. */
export class LastUsed {
  readonly #opts: LastUsedOptions;
  readonly #gapMs: number;
  /** Token id → its last use not yet written. */
  readonly #noted = new Map<string, number>();
  /** Token id → when this process last wrote it (by `clock`); entries older than the gap are dropped. */
  readonly #written = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<number> | null = null;
  #failing = false;

  constructor(opts: LastUsedOptions) {
    this.#opts = opts;
    this.#gapMs = opts.gapMs ?? TOUCH_GAP_MS;
  }

  /** Notes a use of a token at `at` (Unix ms): a map write, nothing more. */
  note(tokenId: string, at: number): void {
    const had = this.#noted.get(tokenId);
    if (had === undefined || at > had) this.#noted.set(tokenId, at);
  }

  /** Writes, every tick, the notes of the tokens not written within the gap. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.flush(false), this.#opts.tickMs ?? TOUCH_TICK_MS);
    this.#timer.unref();
  }

  /**
   * Writes in one batch the notes due (`all`: every note, whatever the gap: at a stop); resolves with
   * how many tokens it wrote. One batch at a time: a call while one is written waits for it, then writes.
   */
  async flush(all: boolean): Promise<number> {
    while (this.#writing) await this.#writing;
    this.#writing = this.#write(all);
    try {
      return await this.#writing;
    } finally {
      this.#writing = null;
    }
  }

  async #write(all: boolean): Promise<number> {
    const now = this.#opts.clock();
    for (const [id, at] of this.#written) if (now - at >= this.#gapMs) this.#written.delete(id);
    const due: TokenUse[] = [];
    for (const [id, at] of this.#noted) if (all || !this.#written.has(id)) due.push({ id, at });
    if (due.length === 0) return 0;
    for (const u of due) {
      this.#noted.delete(u.id);
      this.#written.set(u.id, now);
    }
    try {
      await this.#opts.touch(due);
      this.#failing = false;
      return due.length;
    } catch (err) {
      // Kept for the next tick (a later use noted meanwhile wins), and said once per outage.
      for (const u of due) {
        this.note(u.id, u.at);
        this.#written.delete(u.id);
      }
      if (!this.#failing) this.#opts.log.warn({ err, tokens: due.length }, 'could not write when tokens were last used; trying again');
      this.#failing = true;
      return 0;
    }
  }

  /** Stops the ticks and writes every note left (after the requests in flight finished). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.flush(true);
  }
}

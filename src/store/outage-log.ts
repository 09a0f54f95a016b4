import type { Logger } from 'pino';
import { isStoreUnavailable } from './unavailable.js';

/**
 * The log of a background writer whose store may be away (the request log's batcher, the hold
 * endings): one warning per run of failures, not one per batch, and one line when it writes again.
 */
export class OutageLog {
  #failing = false;

  constructor(
    private readonly log: Logger,
    private readonly backAgain: string,
  ) {}

  /** Warns, unless this run of failures already did; `err` (the store's) gives the reason. */
  warn(message: string, err?: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    const reason = err === undefined ? undefined : isStoreUnavailable(err) ? 'store unavailable' : (err as Error).message;
    this.log.warn({ reason }, message);
  }

  /** A write went through: ends the run of failures, saying so if there was one. */
  written(): void {
    if (this.#failing) this.log.info(this.backAgain);
    this.#failing = false;
  }
}

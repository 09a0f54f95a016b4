import type { Logger } from 'pino';
import { startSweeper } from '../store/sweeper.js';

/** Rows deleted per store call; a purge goes on until none older is left. */
const PAGE = 5_000;
/** How often a running gateway purges each log of what is past its days. */
export const PURGE_INTERVAL_MS = 600_000;
const DAY_MS = 86_400_000;

/** A log's deletion of up to `limit` of its records older than `before` (Unix ms), answering how many went. */
export type DeleteBefore = (before: number, limit: number) => Promise<number>;

/**
 * Deletes every record older than `days` before `now`, a page at a time. Replicas purge on their
 * own clocks: two deleting the same rows delete each once, and what one leaves the next purge takes.
 */
export async function purgeByAge(deleteBefore: DeleteBefore, days: number, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteBefore(now - days * DAY_MS, PAGE);
    total += n;
    if (n < PAGE) return total;
  }
}

/**
 * Purges a log by age every `intervalMs` (default PURGE_INTERVAL_MS) until the returned function is
 * called; nothing when `days` is 0 (the log keeps forever, or is not kept: the caller's setting says).
 */
export function startPurge(
  what: string,
  deleteBefore: DeleteBefore,
  days: number,
  log: Logger,
  clock: () => Date,
  intervalMs: number = PURGE_INTERVAL_MS,
): () => void {
  if (days <= 0) return () => undefined;
  return startSweeper(what, (now) => purgeByAge(deleteBefore, days, now), log, clock, intervalMs);
}

import type { Store } from '../store/store.js';

/** Links deleted per store call; a sweep goes on until none expired is left. */
const PAGE = 500;
/** How often a running gateway deletes expired links (and the files stored behind them). */
export const LINK_SWEEP_INTERVAL_MS = 600_000;

/**
 * Deletes every link that expired by `now`: an expired link already answers `not_found`
 * (the store reads only links still serving); this gives back the room, stored files first of all.
 */
export async function sweepExpiredLinks(store: Store, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await store.deleteExpiredLinks(now, PAGE);
    total += n;
    if (n < PAGE) return total;
  }
}

import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/** Holds given back per store call; a sweep goes on until none is left. */
const PAGE = 500;
/** How often a running gateway looks for expired holds. */
export const HOLD_SWEEP_INTERVAL_MS = 60_000;

/**
 * Gives back every hold that expired by `now` (docs/tokens-and-quota.md, "Quota, prices and the ledger"): the debits
 * of synchronous requests that can no longer finish, because the process serving them died. Each
 * goes back exactly once (the store's transaction decides), with a `refund` row in the ledger.
 */
export async function sweepExpiredHolds(store: Store, log: Logger, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const page = await store.expireHolds(now, PAGE);
    for (const h of page) log.info({ ref: h.ref, token: h.tokenId, model: h.model, amount: h.amount }, 'gave back the hold of a request that never finished');
    total += page.length;
    if (page.length < PAGE) return total;
  }
}

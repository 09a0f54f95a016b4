import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/** Holds given back per store call; a sweep goes on until none is left. */
const PAGE = 500;
/** How often a running gateway looks for expired holds. */
export const HOLD_SWEEP_INTERVAL_MS = 60_000;

/**
 * Ends every hold that expired by `now` (docs/tokens-and-quota.md, "When the quota moves"): the holds of
 * synchronous requests that can no longer finish, or whose settlement a crash kept from being
 * written. Each ends exactly once (the store's transaction decides): settled when the request log
 * records the request's answer, else given back with a `refund` row in the ledger.
 */
export async function sweepExpiredHolds(store: Store, log: Logger, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const page = await store.expireHolds(now, PAGE);
    for (const h of page) {
      const fields = { ref: h.ref, token: h.tokenId, model: h.model, amount: h.amount };
      if (h.outcome === 'settled') log.info(fields, 'settled the hold of a request the request log has answered');
      else log.info(fields, 'gave back the hold of a request that never finished');
    }
    total += page.length;
    if (page.length < PAGE) return total;
  }
}

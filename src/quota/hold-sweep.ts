import type { Logger } from 'pino';
import type { Store } from '../store/store.js';

/** Holds given back per store call; a sweep goes on until none is left. */
const PAGE = 500;
/** How often a running gateway looks for expired holds. */
export const HOLD_SWEEP_INTERVAL_MS = 60_000;

/**
 * Gives back every hold that expired by `now` (README, "Quota, prices and the ledger"): the debits
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

/** Sweeps every `intervalMs` until the returned function is called; a failed sweep is logged and tried again next time. */
export function startHoldSweeper(store: Store, log: Logger, clock: () => Date, intervalMs = HOLD_SWEEP_INTERVAL_MS): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepExpiredHolds(store, log, clock().getTime())
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'sweeping expired holds failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

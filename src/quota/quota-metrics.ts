import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';

/**
 * Counts every quota movement the store commits in `gateway_quota_units_total{kind}` (debit,
 * refund, settle): the ledger is the one place every movement passes, whichever stage caused it
 * (a request, the poller, a query, an aborted submission). Returns the function that stops counting.
 */
export function countQuotaUnits(store: Store, metrics: Metrics): () => void {
  return store.onLedger((e) => metrics.quotaUnits.inc({ kind: e.kind }, e.amount));
}

import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { Store, UnfinishedStatus } from '../store/store.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import type { Poller } from './poller.js';

/** How long the store's count of unfinished tasks is reused: scrapes (several Prometheus, a dashboard) cost one count per this. */
export const TASK_COUNT_TTL_MS = 5_000;

/**
 * The task gauges (docs/operating.md, "Operating: admin routes and metrics"): `gateway_tasks{status}`, the
 * unfinished tasks of the store by status, counted at most every TASK_COUNT_TTL_MS (one count at
 * a time; a failed count keeps the last figures and is logged), the same on every replica of one
 * store; and `gateway_tasks_followed`, the tasks this replica's poller follows now.
 */
export function reportTaskGauges(store: Store, poller: Poller, metrics: Metrics, log: Logger, now: () => number = Date.now): void {
  let counted: { at: number; counts: Record<UnfinishedStatus, number> } | null = null;
  let counting: Promise<void> | null = null;
  const count = () =>
    (counting ??= store
      .countUnfinishedTasks()
      .then((counts) => void (counted = { at: now(), counts }))
      .catch((err: unknown) => log[isStoreUnavailable(err) ? 'debug' : 'warn']({ err }, 'could not count the tasks for the metrics; the last counts stand'))
      .finally(() => (counting = null)));
  metrics.asyncGauge('gateway_tasks', 'Unfinished tasks in the store, by status (counted at most every 5 s)', ['status'], async () => {
    if (!counted || now() - counted.at >= TASK_COUNT_TTL_MS) await count();
    return counted ? Object.entries(counted.counts).map(([status, n]): [Record<string, string>, number] => [{ status }, n]) : [];
  });
  metrics.gauge('gateway_tasks_followed', 'Unfinished tasks this replica follows (polls) now', [], () => [[{}, poller.size]]);
}

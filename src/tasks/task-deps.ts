import type { Metrics } from '../metrics/metrics.js';
import type { RoutingState } from '../routing/routing-state.js';
import type { Store } from '../store/store.js';
import type { Pools } from '../upstream/pools.js';
import type { Poller } from './poller.js';

/** What the task routes need from the process. */
export interface TaskDeps {
  readonly store: Store;
  readonly pools: Pools;
  readonly poller: Poller;
  readonly random?: () => number;
  /** Makes our task ids; golden runs make them deterministic. */
  readonly newId: () => string;
  /** Golden runs: every query of an unfinished task asks the vendor, whatever `stale_ms` says. */
  readonly refreshAlways?: boolean;
  /** Golden runs: synchronous routes over asynchronous vendors look again at once. */
  readonly awaitIntervalMs?: number;
  /** Golden runs: overrides `polling.lost_after_ms` for synchronous routes over asynchronous vendors (0). */
  readonly lostAfterMs?: number;
  /** The process clock (golden runs fix it). */
  readonly clock?: () => Date;
  /** Channel saturation and circuit breakers. */
  readonly routing: RoutingState;
  readonly metrics: Metrics;
}

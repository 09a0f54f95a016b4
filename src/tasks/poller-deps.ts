import type { Logger } from 'pino';
import type { CompiledChannel, Snapshot } from '../config/snapshot.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { Pools } from '../upstream/pools.js';
import { RecordBatches } from './record-batches.js';

/** The one timer the poller keeps; tests give a fake one that runs on their fake clock. */
export interface PollerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd: a poller alone never keeps the process alive. */
const NODE_TIMERS: PollerTimers = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What the poller is built from. */
export interface PollerDeps {
  readonly store: Store;
  readonly pools: Pools;
  readonly snapshot: () => Snapshot;
  readonly log: Logger;
  readonly clock: () => Date;
  readonly random?: () => number;
  /** Default: Node's. */
  readonly timers?: PollerTimers;
  /** Overrides every channel's `polling.lost_after_ms` (golden runs: 0, so one answer shows the verdict). */
  readonly lostAfterMs?: number;
  /** How this replica shares the tasks with others; default: a fresh owner, 30 s leases, the only replica. */
  readonly lease?: LeaseSettings;
  /** Where the poll lag goes (`gateway_task_poll_lag_seconds`); default: nowhere. */
  readonly metrics?: Metrics;
}

/**
 * Leases (docs/deploying.md, "Running several replicas"): each unfinished task is followed by the replica
 * that holds its lease in the store; holders renew every third of `ms`, and a replica that dies
 * lets its leases run out, so the others claim its tasks within `ms`.
 */
export interface LeaseSettings {
  /** This replica's name in the store (GATEWAY_REPLICA_ID; default: random per process). */
  readonly owner: string;
  /** GATEWAY_TASK_LEASE_MS (default 30 s). */
  readonly ms: number;
  /**
   * No other replica shares the store (the embedded store): at start this one takes every
   * unfinished task at once, whoever held it, instead of waiting for the leases of the process
   * it replaces to run out.
   */
  readonly soleReplica: boolean;
}

/** The lease time when none is set (GATEWAY_TASK_LEASE_MS). */
export const DEFAULT_LEASE_MS = 30_000;

/** Upstream calls made by the poller and refreshes, for the benchmark and metrics. */
export interface PollerStats {
  queries: number;
  batchQueries: number;
  updates: number;
}

/**
 * What every part of the poller shares: its deps, read through one clock and one source of
 * chance (tests replace both), whether it was stopped, and its counts.
 */
export class PollerContext {
  readonly deps: PollerDeps;
  /** Set once by `Poller.stop`: from then on nothing is scheduled, claimed or tracked. */
  stopped = false;
  readonly stats: PollerStats = { queries: 0, batchQueries: 0, updates: 0 };
  /** The looks' reads and writes of task records, gathered into one statement per kind (./record-batches.ts). */
  readonly records: RecordBatches;

  constructor(deps: PollerDeps) {
    this.deps = deps;
    this.records = new RecordBatches(deps.store);
  }

  /** The timers given, else Node's. */
  get timers(): PollerTimers {
    return this.deps.timers ?? NODE_TIMERS;
  }

  /** The clock given, in Unix milliseconds. */
  now(): number {
    return this.deps.clock().getTime();
  }

  /** The source of chance given, else Math.random. */
  random(): number {
    return (this.deps.random ?? Math.random)();
  }

  /** An interval ±10 %, so tasks submitted together drift apart. */
  jitter(ms: number): number {
    return Math.round(ms * (0.9 + 0.2 * this.random()));
  }

  /** The channel of that name in the current snapshot. */
  channel(name: string): CompiledChannel | undefined {
    return this.deps.snapshot().channelsByName.get(name);
  }
}

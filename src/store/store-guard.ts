import type { AvailabilityChange, Store, StoreAvailability } from './store.js';
import { isStoreUnavailable, reasonOf, storeUnavailable } from './unavailable.js';

/** How often a store found away is asked whether it is back, and how often calls in flight are looked at. */
export const PROBE_EVERY_MS = 1_000;
/** A call in flight this long makes the store looked at (a store gone silent answers no call and fails none). */
export const SLOW_CALL_MS = 2_000;

/** Store methods that are not calls of a request or of the background work. */
const UNGUARDED = new Set(['ping', 'close', 'onLedger', 'availability']);

/** The guard's clock and periods; tests shorten them. */
export interface GuardTimings {
  readonly now?: () => number;
  readonly probeEveryMs?: number;
  readonly slowCallMs?: number;
}

interface Call {
  readonly startedAt: number;
  readonly reject: (err: unknown) => void;
}

/**
 * A shared store behind a watch on its reachability (docs/deploying.md, "When something fails"). Any call
 * failing with `store_unavailable`, or one left unanswered for SLOW_CALL_MS, makes the store
 * pinged on a connection of its own; a failed ping marks it away. While away, every call is
 * refused at once with `store_unavailable` (no request waits on a store known to be gone, and no
 * queue of them builds up), the calls in flight are failed at once too (their outcome is unknown,
 * as when a connection breaks), and the store is pinged every PROBE_EVERY_MS until it answers.
 */
export class StoreGuard implements StoreAvailability {
  readonly #store: Omit<Store, 'availability'>;
  readonly #now: () => number;
  readonly #slowCallMs: number;
  readonly #inflight = new Set<Call>();
  readonly #listeners = new Set<(change: AvailabilityChange) => void>();
  readonly #timer: NodeJS.Timeout;
  #up = true;
  #reason: string | null = null;
  #downAt = 0;
  #probing: Promise<boolean> | null = null;

  constructor(store: Omit<Store, 'availability'>, timings: GuardTimings = {}) {
    this.#store = store;
    this.#now = timings.now ?? Date.now;
    this.#slowCallMs = timings.slowCallMs ?? SLOW_CALL_MS;
    this.#timer = setInterval(() => this.#tick(), timings.probeEveryMs ?? PROBE_EVERY_MS);
    this.#timer.unref();
  }

  get up(): boolean {
    return this.#up;
  }

  get reason(): string | null {
    return this.#reason;
  }

  onChange(listener: (change: AvailabilityChange) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  check(): Promise<boolean> {
    this.#probing ??= this.#store.ping().then(
      () => {
        this.#probing = null;
        this.#becomeUp();
        return true;
      },
      (err: unknown) => {
        this.#probing = null;
        this.#becomeDown(reasonOf(err));
        return false;
      },
    );
    return this.#probing;
  }

  /** The store, every call of it through this guard. */
  guarded(): Store {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(this.#store)) {
      out[name] = typeof value === 'function' && !UNGUARDED.has(name) ? this.#wrap(value as (...args: unknown[]) => Promise<unknown>) : value;
    }
    out.ping = () => this.#store.ping();
    out.onLedger = this.#store.onLedger;
    out.availability = this;
    out.close = async () => {
      clearInterval(this.#timer);
      await this.#store.close();
    };
    return out as unknown as Store;
  }

  #wrap(fn: (...args: unknown[]) => Promise<unknown>): (...args: unknown[]) => Promise<unknown> {
    return (...args) => {
      if (!this.#up) return Promise.reject(this.#refusal());
      return new Promise((resolve, reject) => {
        const call: Call = { startedAt: this.#now(), reject };
        this.#inflight.add(call);
        fn(...args).then(
          (value) => {
            this.#inflight.delete(call);
            resolve(value);
          },
          (err: unknown) => {
            this.#inflight.delete(call);
            if (isStoreUnavailable(err)) void this.check();
            reject(err);
          },
        );
      });
    };
  }

  #tick(): void {
    if (!this.#up) {
      void this.check();
      return;
    }
    // The Set keeps insertion order: its first call is the oldest still in flight.
    const oldest = this.#inflight.values().next().value as Call | undefined;
    if (oldest && this.#now() - oldest.startedAt >= this.#slowCallMs) void this.check();
  }

  #becomeDown(reason: string): void {
    this.#reason = reason;
    if (!this.#up) return;
    this.#up = false;
    this.#downAt = this.#now();
    const refusal = this.#refusal();
    for (const call of this.#inflight) call.reject(refusal);
    this.#inflight.clear();
    this.#tell({ up: false, reason });
  }

  #becomeUp(): void {
    if (this.#up) return;
    this.#up = true;
    this.#reason = null;
    this.#tell({ up: true, downMs: this.#now() - this.#downAt });
  }

  #tell(change: AvailabilityChange): void {
    for (const l of this.#listeners) l(change);
  }

  #refusal() {
    return storeUnavailable(new Error(`the store is unreachable (${this.#reason}); calls are refused until it answers again`));
  }
}

/**
 * Resolves once the store answers again (at once when it is not known to be away), or with false
 * when `ms` pass first: for a caller that would rather wait a little than give up work already
 * done elsewhere (a vendor that accepted a task whose acceptance is not written yet).
 */
export function untilAvailable(availability: StoreAvailability, ms: number): Promise<boolean> {
  if (availability.up) return Promise.resolve(true);
  return new Promise((resolve) => {
    const stop = availability.onChange((change) => {
      if (!change.up) return;
      clearTimeout(timer);
      stop();
      resolve(true);
    });
    const timer = setTimeout(() => {
      stop();
      resolve(availability.up);
    }, ms);
    timer.unref();
  });
}

import { LRUCache } from 'lru-cache';
import type { SharedLive, SharedSlot, WindowHit } from './shared-live.js';

/** The window of a key's `rpm_limit`. */
export const RPM_WINDOW_MS = 60_000;

/**
 * What the limiter counts under for a token group's shared limits (channels.yaml `groups.<name>.limits`).
 * Token ids are UUIDs, so a group's windows and slots never meet a token's.
 */
export function groupSubject(group: string): string {
  return `group:${group}`;
}

/** A key's (or a group's) rate limits (docs/tokens-and-quota.md, "Rate limits"); null: that limit is not set. */
export interface KeyLimits {
  readonly rpm: number | null;
  readonly maxParallel: number | null;
}

/** What the limits said of one request. */
export type Admission =
  | {
      readonly admitted: true;
      /** The limit the request's `x-ratelimit-*` headers describe: rpm when set, else in flight. */
      readonly limit: number;
      readonly remaining: number;
      readonly resetMs: number;
      /** Gives the in-flight slot back (when the answer has ended); safe to call more than once. */
      release(): void;
      /** Gives back all it took, the slot and the request counted in the window (a later limit refused it). */
      refund(): void;
    }
  | {
      readonly admitted: false;
      /** Which limit refused it. */
      readonly refusedBy: 'rpm' | 'max_parallel';
      readonly limit: number;
      readonly remaining: number;
      readonly resetMs: number;
      readonly retryAfterMs: number;
    };

const NOTHING = (): void => undefined;

/**
 * The rate limits of keys: across replicas through SharedLive (Redis: one Lua script per check,
 * exact whichever replica counts), and in this process whenever nothing is shared (no Redis, or
 * Redis away: each replica then applies each limit on its own). Reads no store: the limits come
 * with the token the authenticator cached.
 */
export class KeyLimiter {
  readonly #shared: SharedLive;
  readonly #now: () => number;
  /** This process's windows, by key: the times of the requests counted, oldest first. */
  readonly #windows = new LRUCache<string, number[]>({ max: 100_000, ttl: RPM_WINDOW_MS });
  /** This process's requests in flight, by key. */
  readonly #inFlight = new Map<string, number>();

  constructor(shared: SharedLive, now: () => number = Date.now) {
    this.#shared = shared;
    this.#now = now;
  }

  /** Admits one request of `id` (a token's id, or groupSubject) under `limits`, or says which limit refused it and for how long. */
  async admit(id: string, limits: KeyLimits): Promise<Admission> {
    const slot = limits.maxParallel === null ? null : await this.#takeSlot(id, limits.maxParallel);
    if (slot === 'full') {
      const limit = limits.maxParallel ?? 0;
      return { admitted: false, refusedBy: 'max_parallel', limit, remaining: 0, resetMs: 0, retryAfterMs: 1_000 };
    }
    const release = slot?.release.bind(slot) ?? NOTHING;
    if (limits.rpm === null) {
      const limit = limits.maxParallel ?? 0;
      return { admitted: true, limit, remaining: Math.max(0, limit - (slot?.held ?? 0)), resetMs: 0, release, refund: release };
    }
    const hit = (await this.#shared.hitWindow(id, limits.rpm, RPM_WINDOW_MS)) ?? this.#hitLocal(id, limits.rpm);
    if (!hit.admitted) {
      release();
      return { admitted: false, refusedBy: 'rpm', limit: limits.rpm, remaining: 0, resetMs: hit.resetMs, retryAfterMs: hit.retryAfterMs };
    }
    const refund = () => {
      release();
      hit.uncount?.();
    };
    return { admitted: true, limit: limits.rpm, remaining: hit.remaining, resetMs: hit.resetMs, release, refund };
  }

  /** One in-flight slot of the key: across replicas when shared, else this process's; 'full' when none is free. */
  async #takeSlot(id: string, limit: number): Promise<SharedSlot | 'full'> {
    const shared = await this.#shared.takeSlot(`key:${id}`, limit);
    if (shared === null) return 'full';
    if (shared !== undefined) return shared;
    // Read after the wait for Redis's answer, and taken before yielding again.
    const n = this.#inFlight.get(id) ?? 0;
    if (n >= limit) return 'full';
    this.#inFlight.set(id, n + 1);
    let released = false;
    return {
      held: n + 1,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#inFlight.get(id) ?? 1) - 1;
        if (left <= 0) this.#inFlight.delete(id);
        else this.#inFlight.set(id, left);
      },
    };
  }

  /** The sliding window of HIT_WINDOW (redis-scripts.ts), in this process. */
  #hitLocal(id: string, limit: number): WindowHit {
    const now = this.#now();
    const times = this.#windows.get(id) ?? [];
    let gone = 0;
    while (gone < times.length && (times[gone] ?? 0) <= now - RPM_WINDOW_MS) gone++;
    if (gone > 0) times.splice(0, gone);
    const admitted = times.length < limit;
    if (admitted) {
      times.push(now);
      this.#windows.set(id, times);
    }
    const first = times[0] ?? now;
    const last = times[times.length - 1] ?? now;
    let counted = admitted;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      const at = times.lastIndexOf(now);
      if (at >= 0) times.splice(at, 1);
    };
    return { admitted, remaining: limit - times.length, retryAfterMs: first + RPM_WINDOW_MS - now, resetMs: last + RPM_WINDOW_MS - now, uncount };
  }
}

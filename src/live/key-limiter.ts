import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KeptWindow, SharedLive, SharedSlot, WindowHit } from './shared-live.js';

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

/** Keys whose windows this process keeps at most (the least recently used go first). */
const WINDOWS_MAX = 100_000;

/** One request this process counted in a window: when (its clock), and its member in the shared window. */
interface Hit {
  readonly at: number;
  readonly member: string;
}

/**
 * The rate limits of keys: across replicas through SharedLive (Redis: one Lua script per check,
 * exact whichever replica counts), and in this process whenever nothing is shared (no Redis, or
 * Redis away: each replica then applies each limit on its own). Reads no store: the limits come
 * with the token the authenticator cached.
 *
 * Whatever counts, this process keeps its own log of the requests it admitted in each window and
 * its own count of requests in flight: when Redis goes away, the limits go on from what this
 * replica had already taken (not from zero), and when Redis comes back (perhaps empty) the log is
 * put back into the shared windows. So within any one window a key gets at most N times its rpm
 * with N replicas, however Redis comes and goes.
 */
export class KeyLimiter {
  readonly #shared: SharedLive;
  readonly #now: () => number;
  /**
   * This process's windows, by key: the requests it counted (shared or not), oldest first. Made by
   * the first request of a key with an rpm limit: an LRUCache allocates its arrays for `max` entries
   * up front, 4.3 MB of heap that a gateway whose keys have no rpm limit never uses (issue 41).
   */
  #windows: LRUCache<string, Hit[]> | null = null;
  /** This process's requests in flight, by key (slots shared across replicas included). */
  readonly #inFlight = new Map<string, number>();
  /** Members of the shared windows are this process's: a random prefix and a sequence. */
  readonly #prefix = `${randomBytes(6).toString('base64url')}:`;
  #seq = 0;

  constructor(shared: SharedLive, now: () => number = Date.now) {
    this.#shared = shared;
    this.#now = now;
    shared.keepWindows(() => this.#kept());
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
    const member = `${this.#prefix}${++this.#seq}`;
    const shared = await this.#shared.hitWindow(id, limits.rpm, RPM_WINDOW_MS, member);
    const hit = shared ? this.#noteShared(id, shared, member) : this.#hitLocal(id, limits.rpm, member);
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
    // Read after the wait for Redis's answer, and taken before yielding again.
    const n = this.#inFlight.get(id) ?? 0;
    if (shared === undefined && n >= limit) return 'full';
    this.#inFlight.set(id, n + 1);
    let released = false;
    return {
      held: shared?.held ?? n + 1,
      release: () => {
        if (released) return;
        released = true;
        shared?.release();
        const left = (this.#inFlight.get(id) ?? 1) - 1;
        if (left <= 0) this.#inFlight.delete(id);
        else this.#inFlight.set(id, left);
      },
    };
  }

  /** The windows, made on first use. */
  #windowsMade(): LRUCache<string, Hit[]> {
    this.#windows ??= new LRUCache<string, Hit[]>({ max: WINDOWS_MAX, ttl: RPM_WINDOW_MS });
    return this.#windows;
  }

  /** The requests of `id` this process counted still in the window, oldest first (the log itself). */
  #log(id: string, now: number): Hit[] {
    const hits = this.#windows?.get(id) ?? [];
    let gone = 0;
    while (gone < hits.length && (hits[gone]?.at ?? 0) <= now - RPM_WINDOW_MS) gone++;
    if (gone > 0) hits.splice(0, gone);
    return hits;
  }

  /** A request the shared window counted, noted in this process's log too (for when Redis goes away or comes back empty). */
  #noteShared(id: string, hit: WindowHit, member: string): WindowHit {
    if (!hit.admitted) return hit;
    const now = this.#now();
    const hits = this.#log(id, now);
    const mine = { at: now, member };
    hits.push(mine);
    this.#windowsMade().set(id, hits);
    return {
      ...hit,
      uncount: () => {
        hit.uncount?.();
        const at = hits.lastIndexOf(mine);
        if (at >= 0) hits.splice(at, 1);
      },
    };
  }

  /** The sliding window of HIT_WINDOW (redis-scripts.ts), in this process, over the log of what it counted. */
  #hitLocal(id: string, limit: number, member: string): WindowHit {
    const now = this.#now();
    const hits = this.#log(id, now);
    const admitted = hits.length < limit;
    const mine = { at: now, member };
    if (admitted) {
      hits.push(mine);
      this.#windowsMade().set(id, hits);
    }
    const first = hits[0]?.at ?? now;
    const last = hits[hits.length - 1]?.at ?? now;
    let counted = admitted;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      const at = hits.lastIndexOf(mine);
      if (at >= 0) hits.splice(at, 1);
    };
    return { admitted, remaining: limit - hits.length, retryAfterMs: first + RPM_WINDOW_MS - now, resetMs: last + RPM_WINDOW_MS - now, uncount };
  }

  /** What this process counted in each window still open, for a shared window rebuilt after Redis was away. */
  *#kept(): Iterable<KeptWindow> {
    if (this.#windows === null) return;
    const now = this.#now();
    for (const [key, hits] of this.#windows.entries()) {
      const open = hits.filter((h) => h.at > now - RPM_WINDOW_MS);
      if (open.length > 0) yield { key, windowMs: RPM_WINDOW_MS, hits: open.map((h) => ({ member: h.member, ageMs: now - h.at })) };
    }
  }
}

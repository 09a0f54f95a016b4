/**
 * What replicas of one gateway share while they run (docs/deploying.md, "Running several replicas"): call
 * slots under a limit, breaker transitions, token changes, reloads and each replica's config
 * version. `perProcess` shares nothing (one replica, or GATEWAY_REDIS unset); redis-live.ts shares
 * through Redis and falls back to per-process behaviour while Redis is away.
 */

/** Something one replica tells the others. */
export type LiveEvent =
  | { readonly t: 'breaker'; readonly channel: string; readonly state: 'open' | 'closed'; readonly openedAt: number | null; readonly retryAt: number | null }
  | { readonly t: 'token'; readonly keyHash: string }
  | { readonly t: 'reload' };

/** What one replica says of its configuration, for `GET /admin/config`. */
export interface ReplicaStatus {
  readonly replica: string;
  /** Number of the snapshot serving on that replica (each counts its own). */
  readonly generation: number;
  /** Digest of the config files it serves (equal on replicas serving the same files). */
  readonly version: string;
  readonly loadedAt: string;
  /** Whether its last reload succeeded; null before any. */
  readonly lastReloadOk: boolean | null;
  /** When it last said so (it says so every few seconds while it runs). */
  readonly seenAt: string;
}

/** A slot held across replicas; `release` may be called more than once. */
export interface SharedSlot {
  release(): void;
  /** How many slots of its limit were held once this one was taken (this one included), when known. */
  readonly held?: number;
}

/** What a sliding window answered for one request (limits.ts reads it for the key's headers). */
export interface WindowHit {
  /** Counted in the window; false: the window is full and the request was not counted. */
  readonly admitted: boolean;
  /** Requests the window takes still, after this one. */
  readonly remaining: number;
  /** Until a request leaves the window (the wait before a refused request may try again), ms. */
  readonly retryAfterMs: number;
  /** Until every request now counted has left the window, ms (OpenAI's "reset"). */
  readonly resetMs: number;
  /** Takes the request counted back out (a later limit refused it); nothing when it was not counted. */
  readonly uncount?: () => void;
}

/** The requests one replica counted in one window, for a Redis that comes back (redis-live.ts puts them back). */
export interface KeptWindow {
  /** The key as `hitWindow` named it. */
  readonly key: string;
  readonly windowMs: number;
  /** Each request's member (as sent to `hitWindow`) and how long ago it was counted. */
  readonly hits: readonly { readonly member: string; readonly ageMs: number }[];
}

export interface SharedLive {
  /** Whether other replicas see what this one shares right now. */
  readonly up: boolean;
  /**
   * One of `limit` slots of `key` across replicas: the slot, or null when all are held. Undefined
   * when nothing is shared now (no Redis, or it is away): the caller applies the limit in-process.
   */
  takeSlot(key: string, limit: number): Promise<SharedSlot | null | undefined>;
  /**
   * Counts one request of `key` in a sliding window of `windowMs` holding at most `limit`, across
   * replicas, under `member` (unique to this request). Undefined when nothing is shared now: the
   * caller counts in-process.
   */
  hitWindow(key: string, limit: number, windowMs: number, member: string): Promise<WindowHit | undefined>;
  /**
   * Tells what this replica counted in its windows (read each time sharing starts again), so that a
   * shared window that was forgotten meanwhile is rebuilt rather than started empty.
   */
  keepWindows(kept: () => Iterable<KeptWindow>): void;
  /** The right to send a half-open breaker's single probe, across replicas; true when nothing is shared. */
  claimProbe(channel: string): Promise<boolean>;
  /** Gives the probe right back once the probe has ended. */
  endProbe(channel: string): void;
  /** Tells the other replicas; nothing when nothing is shared. */
  publish(event: LiveEvent): void;
  /** Calls `listener` with each event another replica published. */
  onEvent(listener: (event: LiveEvent) => void): void;
  /** Calls `listener` after sharing (re)starts: whatever was published meanwhile was missed. */
  onResync(listener: () => void): void;
  /** The breakers other replicas opened and that are still open, by channel, among `channels`. */
  openBreakers(channels: readonly string[]): Promise<Map<string, Extract<LiveEvent, { t: 'breaker' }>>>;
  /** Publishes this replica's status now and every few seconds (`status` is read each time). */
  announce(status: () => Omit<ReplicaStatus, 'seenAt'>): void;
  /** Every replica that announced itself recently; null when nothing is shared. */
  replicas(): Promise<ReplicaStatus[] | null>;
  close(): Promise<void>;
}

/** Sharing nothing: every limit is this process's, and nobody else is told anything. */
export const perProcess: SharedLive = {
  up: false,
  takeSlot: async () => undefined,
  hitWindow: async () => undefined,
  keepWindows: () => undefined,
  claimProbe: async () => true,
  endProbe: () => undefined,
  publish: () => undefined,
  onEvent: () => undefined,
  onResync: () => undefined,
  openBreakers: async () => new Map(),
  announce: () => undefined,
  replicas: async () => null,
  close: async () => undefined,
};

import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';
import type { CompiledChannel, Snapshot } from '../config/snapshot.js';

/**
 * undici's Pool, loaded without the package index: the index also loads fetch, WebSocket, caches
 * and mocks, about 4 MB of heap and 9 MB of RSS the gateway never uses (it sends through pools
 * only). What the index does for a pool is one line, giving every dispatcher the request API
 * (`request`, `stream`, ...); it is done here the same way. test/unit/pools.test.ts checks, in a
 * process of its own, that the class is the index's and that a request goes through.
 */
const requireUndici = createRequire(import.meta.url);
const Pool = requireUndici('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
Object.assign((requireUndici('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype, requireUndici('undici/lib/api/index.js'));
type Pool = UndiciPool;

/** What the map holds for one pool: the pool, its origin, and who sends there from another origin. */
interface Entry {
  readonly pool: Pool;
  readonly origin: string;
  /** Names of channels that used this pool for a host other than their own (a result CDN). */
  readonly foreignUsers: Set<string>;
}

/** The pool key: the same origin with other connect settings is another pool. */
const keyOf = (channel: CompiledChannel, origin: string) => `${origin}|${channel.timeouts.connectMs}|${channel.keepAliveMs}`;

/**
 * How a channel's pool connects. No bound on connections: a bound below the calls in flight would
 * queue them inside undici, where no metric, log or 429 sees them (issue 30: 64 connections under
 * 2,000 slow calls timed out 96 % of them). Calls in flight are bounded where they are seen:
 * `max_concurrency` and its queue (src/routing/), `polling.concurrency` for the poller's looks.
 * One request per connection at a time (no pipelining: a slow answer would hold the ones behind
 * it). An idle connection is kept `keep_alive_ms`, or as long as the vendor's `Keep-Alive:
 * timeout` hint less 2 s (undici's threshold), so a request never goes out on a socket the
 * vendor is about to close.
 */
export function poolOptions(channel: Pick<CompiledChannel, 'timeouts' | 'keepAliveMs'>): UndiciPool.Options {
  return {
    connections: null,
    pipelining: 1,
    connect: { timeout: channel.timeouts.connectMs },
    keepAliveTimeout: channel.keepAliveMs,
    keepAliveTimeoutThreshold: 2_000,
  };
}

/**
 * One undici Pool per upstream origin (and connect settings), shared by every channel that points
 * there, so keep-alive connections are reused across requests and channels.
 */
export class Pools {
  readonly #pools = new Map<string, Entry>();

  /** The pool for a channel's origin, or for another origin the channel sends to (a result host), created on first use. */
  get(channel: CompiledChannel, origin = channel.origin): Pool {
    const key = keyOf(channel, origin);
    let entry = this.#pools.get(key);
    if (!entry) {
      const pool = new Pool(origin, poolOptions(channel));
      entry = { pool, origin, foreignUsers: new Set() };
      this.#pools.set(key, entry);
    }
    // Only downloads from a vendor's CDN take this branch; the request path's own-origin calls stay one lookup.
    if (origin !== channel.origin) entry.foreignUsers.add(channel.name);
    return entry.pool;
  }

  /** Origins with an open pool, for tests and reports. */
  origins(): string[] {
    return [...new Set([...this.#pools.values()].map((e) => e.origin))];
  }

  /**
   * After a reload: closes the pools no channel needs any more. A pool stays when a channel of
   * `snapshot` or of `keep` (definitions pinned by unfinished tasks) sends to its origin with its
   * settings, or when it serves another origin (a result CDN) for a channel of that name still
   * configured. The others leave the map at once, so a new request gets a fresh pool, and close
   * after their running requests finish. Resolves with how many were closed, once they are.
   */
  async prune(snapshot: Snapshot, keep: Iterable<CompiledChannel> = []): Promise<number> {
    const needed = new Set<string>();
    const names = new Set<string>();
    for (const list of [snapshot.channels, keep]) {
      for (const c of list) {
        needed.add(keyOf(c, c.origin));
        names.add(c.name);
      }
    }
    const closing: Pool[] = [];
    for (const [key, entry] of this.#pools) {
      if (needed.has(key) || [...entry.foreignUsers].some((n) => names.has(n))) continue;
      this.#pools.delete(key);
      closing.push(entry.pool);
    }
    await Promise.all(closing.map((p) => p.close().catch(() => undefined)));
    return closing.length;
  }

  /** Closes every pool after its requests finish; `abort`: at once, failing the vendor calls still in flight. */
  async close(abort = false): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((e) => (abort ? e.pool.destroy() : e.pool.close()).catch(() => undefined)));
  }
}

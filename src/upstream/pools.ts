import { Pool } from 'undici';
import type { CompiledChannel } from '../config/snapshot.js';

/**
 * One undici Pool per upstream origin (and connect settings), shared by every channel that points
 * there, so keep-alive connections are reused across requests and channels.
 */
export class Pools {
  readonly #pools = new Map<string, Pool>();

  /** The pool for a channel's origin, or for another origin the channel sends to (a result host), created on first use. */
  get(channel: CompiledChannel, origin = channel.origin): Pool {
    const key = `${origin}|${channel.timeouts.connectMs}|${channel.maxConnections}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new Pool(origin, {
        connections: channel.maxConnections,
        connect: { timeout: channel.timeouts.connectMs },
        keepAliveTimeout: 30_000,
        pipelining: 1,
      });
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pool after its requests finish. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => undefined)));
  }
}

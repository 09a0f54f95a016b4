/**
 * The bounds on a channel's vendor calls and the lines in front of them (docs/routing.md,
 * "Saturation"; issue 30): `max_concurrency`, its `queue`, the old `max_connections`, and how long
 * an idle connection is kept.
 */
import type { ConfigIssue } from './issues.js';
import type { QueuePolicy } from './snapshot.js';
import type { YamlSource } from './yaml-source.js';

/**
 * An idle vendor connection is closed after this when the vendor states no keep-alive timeout:
 * below the 5 s of Node's and uvicorn's servers, so we never send on a socket the vendor is
 * closing (a POST lost that way may or may not have been received, and cannot be retried).
 */
const DEFAULT_KEEP_ALIVE_MS = 4_000;
/** How long a request waits in line for a slot of a full max_concurrency, by default. */
const DEFAULT_MAX_WAIT_MS = 30_000;

/** The line in front of a max_concurrency, as written. */
export interface RawQueue {
  max_waiting?: number;
  max_wait_ms?: number;
}

/** What of a channel's entry these read. */
interface RawLimits {
  readonly max_connections?: number;
  readonly max_concurrency?: number;
}

/**
 * A channel's bound on calls in flight. `max_connections` once sized the connection pool below
 * it (64 by default), a queue nobody saw; the pool now has no bound of its own. A
 * `max_connections` alone is read as the `max_concurrency` it stood for; one below an explicit
 * `max_concurrency` would hide a queue again, and is an error.
 */
export function channelConcurrency(
  src: YamlSource,
  c: RawLimits,
  at: (...rest: (string | number)[]) => (string | number)[],
  issues: ConfigIssue[],
): number | null {
  const conns = c.max_connections;
  if (conns === undefined) return c.max_concurrency ?? null;
  if (c.max_concurrency === undefined) {
    issues.push(
      src.issue(
        at('max_connections'),
        `max_connections is replaced by max_concurrency (read as max_concurrency: ${conns}); the connection pool follows max_concurrency`,
        'warning',
      ),
    );
    return conns;
  }
  if (conns < c.max_concurrency) {
    issues.push(
      src.issue(
        at('max_connections'),
        `max_connections (${conns}) below max_concurrency (${c.max_concurrency}) would queue calls where nobody sees them; remove it: the pool follows max_concurrency`,
      ),
    );
  } else {
    issues.push(src.issue(at('max_connections'), 'max_connections is replaced by max_concurrency and has no effect; remove it', 'warning'));
  }
  return c.max_concurrency;
}

/** The line in front of a limit: as many may wait as the limit admits, for 30 s, unless set. */
export function queuePolicy(q: RawQueue | undefined, limit: number | null): QueuePolicy {
  return Object.freeze({ maxWaiting: q?.max_waiting ?? limit ?? 0, maxWaitMs: q?.max_wait_ms ?? DEFAULT_MAX_WAIT_MS });
}

/** How long an idle vendor connection is kept when the vendor does not say. */
export function keepAliveMs(set: number | undefined): number {
  return set ?? DEFAULT_KEEP_ALIVE_MS;
}

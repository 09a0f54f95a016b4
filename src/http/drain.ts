import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * GATEWAY_DRAIN_MS by default: most synchronous image calls finish within it, and it ends before
 * the 30 s an orchestrator (Kubernetes' terminationGracePeriodSeconds) waits before SIGKILL.
 */
export const DEFAULT_DRAIN_MS = 25_000;

/** A server's requests in flight, and a stop that lets them finish within a deadline. */
export interface Drain {
  /** Requests received and not yet answered (or whose connection has not yet closed). */
  readonly inflight: number;
  /** True once `drain` was called. */
  readonly draining: boolean;
  /**
   * Stops taking connections, lets the requests in flight finish, closes each connection as it
   * falls idle, and after `deadlineMs` cuts whatever is left. Resolves when the server is closed,
   * with how many requests the deadline cut off.
   */
  drain(deadlineMs: number): Promise<{ cutOff: number }>;
}

/** Counts `server`'s requests from now on, so that a stop can wait for them. */
export function drainable(server: Server): Drain {
  let inflight = 0;
  let draining = false;
  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    inflight++;
    // A request that arrives on a kept-alive connection during the drain is served, then its
    // connection closes: the client's next request goes to another replica.
    if (draining) res.setHeader('connection', 'close');
    res.once('close', () => {
      inflight--;
      if (draining) server.closeIdleConnections();
    });
  };
  server.on('request', onRequest);
  server.on('checkContinue', onRequest);
  return {
    get inflight() {
      return inflight;
    },
    get draining() {
      return draining;
    },
    async drain(deadlineMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), deadlineMs);
      });
      const outcome = await Promise.race([closed.then(() => 'closed' as const), late]);
      clearTimeout(timer);
      if (outcome === 'closed') return { cutOff: 0 };
      const cutOff = inflight;
      server.closeAllConnections();
      await closed;
      return { cutOff };
    },
  };
}

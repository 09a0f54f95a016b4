/**
 * What the benchmarks' bare pass-throughs (bench/overhead, bench/download, bench/streams) share: the
 * vendor pool, made with the gateway's own pool settings so the baseline differs only by what the
 * gateway does per request; the streaming ones' relay of an answer as it arrives; and the server's
 * start and stop as the runners expect them.
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { type Dispatcher, Pool } from 'undici';
import { keepAliveMs } from '../src/config/compile-limits.js';
import { poolOptions } from '../src/upstream/pools.js';

/** A pool to `upstream` as the gateway makes one for a channel with default settings; BENCH_UPSTREAM_CONNECTIONS bounds it (unset: no bound, as the gateway's). */
export function passthroughPool(upstream: string): Pool {
  const connections = process.env.BENCH_UPSTREAM_CONNECTIONS;
  return new Pool(upstream, {
    ...poolOptions({ timeouts: { connectMs: 10_000, headersMs: 120_000, bodyMs: 120_000 }, keepAliveMs: keepAliveMs(undefined) }),
    connections: connections ? Number(connections) : null,
  });
}

/** A signal that aborts the vendor request when the client goes away before its answer is written whole. */
export function abortWhenGone(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/**
 * Relays the vendor's answer with the `passed` headers of it, its body piped as it arrives (the
 * vendor read only as fast as the client reads); a call that failed before its answer is a 502 in
 * words, one that failed after it a cut connection.
 */
export function pipeAnswer(res: ServerResponse, answer: Promise<Dispatcher.ResponseData>, passed: readonly string[]): void {
  answer
    .then(async (up) => {
      const out: Record<string, string> = {};
      for (const h of passed) {
        const v = up.headers[h];
        if (typeof v === 'string') out[h] = v;
      }
      res.writeHead(up.statusCode, out);
      await pipeline(up.body, res);
    })
    .catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`passthrough: ${(err as Error).message}`);
      } else res.destroy();
    });
}

/**
 * Listens on a free loopback port and prints `{"ready":"passthrough","url":…}`; on SIGTERM or
 * SIGINT stops taking requests and ends the pool (`destroy`: at once, cutting the calls in flight).
 */
export function serve(server: Server, pool: Pool, end: 'close' | 'destroy'): void {
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ ready: 'passthrough', url: `http://127.0.0.1:${port}` })}\n`);
  });
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    pool[end]().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

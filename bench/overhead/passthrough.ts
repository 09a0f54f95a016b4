/**
 * Child-process entry of the benchmark: the baseline "bare undici pass-through proxy". It forwards
 * the request body unchanged through an undici Pool to the simulator, at the path the gateway's
 * profile calls, adds the vendor's auth header, and returns the answer as it came. No auth, validation, mapping or accounting: it is the floor any
 * proxy in Node pays (two HTTP hops), against which the gateway's own cost is measured.
 *
 * Bodies are buffered, not streamed: for these small bodies streaming them through undici and
 * piping the answer measured ~30% fewer req/s and a worse p99 here, and a slow baseline would
 * flatter the gateway (which buffers too).
 *
 * Settings (environment): BENCH_SIM_URL; BENCH_AUTH_HEADER and BENCH_AUTH_VALUE, the vendor's
 * auth header (`x-goog-api-key: KEY`, `authorization: Bearer KEY`); BENCH_UPSTREAM_PATH, where
 * every request goes (default: the path it came to); BENCH_UPSTREAM_CONNECTIONS (unset: no bound,
 * as the gateway's pools since issue 30). Prints `{"url":…}` when ready.
 */
import { createServer } from 'node:http';
import type { Dispatcher } from 'undici';
import { passthroughPool, serve } from '../passthrough-common.js';

const upstream = process.env.BENCH_SIM_URL;
const authHeader = process.env.BENCH_AUTH_HEADER;
const authValue = process.env.BENCH_AUTH_VALUE;
const upstreamPath = process.env.BENCH_UPSTREAM_PATH;
if (!upstream || !authHeader || !authValue) {
  process.stderr.write('passthrough: BENCH_SIM_URL, BENCH_AUTH_HEADER and BENCH_AUTH_VALUE are required\n');
  process.exit(2);
}
const pool = passthroughPool(upstream);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers: Record<string, string> = { [authHeader]: authValue };
    const type = req.headers['content-type'];
    if (type) headers['content-type'] = type;
    const method = (req.method ?? 'GET') as Dispatcher.HttpMethod;
    const body = method === 'GET' || method === 'HEAD' ? null : Buffer.concat(chunks);
    pool
      .request({ method, path: upstreamPath ?? req.url ?? '/', headers, body })
      .then(async (up) => {
        const answer = Buffer.from(await up.body.arrayBuffer());
        const out: Record<string, string | number> = { 'content-length': answer.length };
        const upType = up.headers['content-type'];
        if (typeof upType === 'string') out['content-type'] = upType;
        res.writeHead(up.statusCode, out);
        res.end(answer);
      })
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`passthrough: ${(err as Error).message}`);
      });
  });
});
serve(server, pool, 'close');

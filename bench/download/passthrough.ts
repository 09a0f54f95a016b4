/**
 * Child-process entry of bench/download: the baseline, a bare streaming pass-through. A GET goes
 * unchanged (path, `Range`, `If-Range`) through an undici Pool to the vendor with its key; the
 * answer comes back with the headers that describe the bytes, its body piped as it arrives
 * (`stream.pipeline`, so the vendor is read only as fast as the client reads), and a client that
 * goes away aborts the vendor request. No auth, no store, no task lookup: the floor any streaming
 * proxy in Node pays, against which the gateway's downloads are measured.
 *
 * Settings (environment): BENCH_VENDOR_URL, BENCH_VENDOR_KEY; BENCH_UPSTREAM_CONNECTIONS (unset: no
 * bound, as the gateway's pools); the channel's timeouts (60 s headers, 60 s body). Prints
 * `{"ready":"passthrough","url":…}`.
 */
import { createServer } from 'node:http';
import { abortWhenGone, passthroughPool, pipeAnswer, serve } from '../passthrough-common.js';

const upstream = process.env.BENCH_VENDOR_URL;
const key = process.env.BENCH_VENDOR_KEY;
if (!upstream || !key) {
  process.stderr.write('passthrough: BENCH_VENDOR_URL and BENCH_VENDOR_KEY are required\n');
  process.exit(2);
}
const pool = passthroughPool(upstream);
const PASSED = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];

const server = createServer((req, res) => {
  req.resume();
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  for (const h of ['range', 'if-range']) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  const signal = abortWhenGone(res);
  pipeAnswer(res, pool.request({ method: 'GET', path: req.url ?? '/', headers, headersTimeout: 60_000, bodyTimeout: 60_000, signal }), PASSED);
});
serve(server, pool, 'destroy');

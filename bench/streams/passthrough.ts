/**
 * Child-process entry of bench/streams: the second baseline, a bare streaming pass-through. A
 * POST's body is read whole (a small JSON body) and sent through an undici Pool (the gateway's pool
 * settings, passthrough-common.ts) to the simulator at the same path with the vendor's key; the
 * answer's status and content type come back and its body is piped as it arrives (`stream.pipeline`:
 * each event leaves when it came, and the vendor is read only as fast as the client reads); a client
 * that goes away aborts the vendor request. No auth, no validation, no event parsing or mapping, no
 * price: the floor any proxy in Node pays to relay an event stream, against which the gateway's own
 * cost is measured.
 *
 * Settings (environment): BENCH_SIM_URL, BENCH_SIM_KEY; BENCH_UPSTREAM_CONNECTIONS (unset: no bound,
 * as the gateway's pools). The channel's timeouts (180 s headers, 60 s between body chunks). Prints
 * `{"ready":"passthrough","url":…}`.
 */
import { createServer } from 'node:http';
import type { Dispatcher } from 'undici';
import { abortWhenGone, passthroughPool, pipeAnswer, serve } from '../passthrough-common.js';

const upstream = process.env.BENCH_SIM_URL;
const key = process.env.BENCH_SIM_KEY;
if (!upstream || !key) {
  process.stderr.write('passthrough: BENCH_SIM_URL and BENCH_SIM_KEY are required\n');
  process.exit(2);
}
const pool = passthroughPool(upstream);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const signal = abortWhenGone(res);
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    const type = req.headers['content-type'];
    if (type) headers['content-type'] = type;
    const method = (req.method ?? 'GET') as Dispatcher.HttpMethod;
    const body = method === 'GET' || method === 'HEAD' ? null : Buffer.concat(chunks);
    pipeAnswer(res, pool.request({ method, path: req.url ?? '/', headers, body, headersTimeout: 180_000, bodyTimeout: 60_000, signal }), ['content-type']);
  });
});
serve(server, pool, 'destroy');

/**
 * Child-process entry of the benchmark: the floor, what any Node gateway with this one's duties
 * pays per request at the least, measured beside the pass-through so the CPU targets can be read
 * against it (issue 41: "a target below what Node itself can do is a finding"). On top of the
 * pass-through (passthrough.ts) it does, per request, the least each duty needs and nothing more:
 * - the caller's key hashed (SHA-256) and looked up, as every key is;
 * - the request body parsed as JSON and written again for the vendor (a mapping that changes
 *   nothing), and the vendor's answer parsed and written again for the client;
 * - one access-log line, a JSON object written to stdout (the gateway logs one at LOG_LEVEL=info).
 * No validation, routing, quota, metrics, request log or store: each of those is the gateway's own
 * cost above this floor.
 *
 * Settings (environment): those of passthrough.ts, and BENCH_FLOOR_KEY, the one key it accepts
 * (the gateway's). Prints `{"url":…}` when ready.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { passthroughPool, serve } from '../passthrough-common.js';

const upstream = process.env.BENCH_SIM_URL;
const authHeader = process.env.BENCH_AUTH_HEADER;
const authValue = process.env.BENCH_AUTH_VALUE;
const upstreamPath = process.env.BENCH_UPSTREAM_PATH;
const key = process.env.BENCH_FLOOR_KEY;
if (!upstream || !authHeader || !authValue || !upstreamPath || !key) {
  process.stderr.write('floor: BENCH_SIM_URL, BENCH_AUTH_HEADER, BENCH_AUTH_VALUE, BENCH_UPSTREAM_PATH and BENCH_FLOOR_KEY are required\n');
  process.exit(2);
}
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const keys = new Map([[sha(key), 'bench']]);
const pool = passthroughPool(upstream);

const server = createServer((req, res) => {
  const started = performance.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const answer = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      process.stdout.write(`${JSON.stringify({ time: Date.now(), method: req.method, url: req.url, status, ms: performance.now() - started })}\n`);
    };
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !keys.has(sha(bearer))) return answer(401, '{"error":"unknown key"}');
    let body: string;
    try {
      body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      return answer(400, '{"error":"not JSON"}');
    }
    pool
      .request({ method: 'POST', path: upstreamPath, headers: { [authHeader]: authValue, 'content-type': 'application/json' }, body })
      .then(async (up) => answer(up.statusCode, JSON.stringify(await up.body.json())))
      .catch((err: unknown) => answer(502, JSON.stringify({ error: (err as Error).message })));
  });
});
serve(server, pool, 'close');

/**
 * Child-process entry of bench/download: a vendor speaking just enough zeta-openai for the
 * gateway's video task and image link routes, whose files are made on the fly
 * (src/sim/generated-file.ts): any size, no buffer of it, no disk, and every byte it sends counted.
 *
 *   POST /v1/videos                 a video object, already `completed`; the prompt's `[bench:bytes=N]`
 *                                   sets the size of its content (default 1 MiB), `[bench:no-range]`
 *                                   makes its server ignore Range
 *   GET  /v1/videos/{id}            the same object
 *   GET  /v1/videos/{id}/content    the file (Range, If-Range → 206/416)
 *   POST /v1/images/generations     `{created, data:[{url}]}`, the URL a file on this vendor (`[bench:bytes=N]`)
 *   GET  /files/{name}              that file; no key, as a presigned URL
 *   GET  /_bench/stats              every answer of a file so far: `{transfers: [{id, status, start,
 *                                   end, sent, done, aborted}]}`
 *
 * A file's id names its seed and size (`video_7b1073741824`), so the bench can ask the pass-through
 * for a file no task made. Key: `authorization: Bearer BENCH_VENDOR_KEY` on /v1/. Prints
 * `{"ready":"vendor","url":…,"key":…}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveGenerated, type Transfer } from '../../src/sim/generated-file.js';

const key = process.env.BENCH_VENDOR_KEY ?? 'bench-vendor-key';
let base = '';
let seq = 0;
const transfers: { id: string; t: Transfer }[] = [];
/** Answers of files kept for the stats (the bench makes a few dozen). */
const KEPT = 2000;

/** A file id: its seed, its size, and whether its server ignores Range. */
const FILE_ID = /^(?:video|file)_([0-9]{1,9})b([0-9]{1,13})(n?)(?:\.bin)?$/;

function idFor(prefix: string, prompt: string): string {
  const bytes = /\[bench:bytes=([0-9]{1,13})\]/.exec(prompt)?.[1] ?? String(2 ** 20);
  const noRange = prompt.includes('[bench:no-range]') ? 'n' : '';
  return `${prefix}_${++seq}b${bytes}${noRange}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function video(id: string): unknown {
  const now = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'video',
    model: 'epsilon-video-3',
    status: 'completed',
    progress: 100,
    created_at: now,
    completed_at: now,
    expires_at: null,
    prompt: 'bench',
    seconds: '4',
    size: '1280x720',
    remixed_from_video_id: null,
    error: null,
  };
}

function serveFile(req: IncomingMessage, res: ServerResponse, id: string) {
  const m = FILE_ID.exec(id);
  if (!m) return json(res, 404, { error: { message: 'no such file', type: 'invalid_request_error', param: null, code: null } });
  const t = serveGenerated(req, res, {
    seed: Number(m[1]),
    size: Number(m[2]),
    contentType: id.startsWith('video') ? 'video/mp4' : 'application/octet-stream',
    ignoreRange: m[3] === 'n',
  });
  transfers.push({ id, t });
  if (transfers.length > KEPT) transfers.splice(0, transfers.length - KEPT);
}

function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const path = new URL(req.url ?? '/', 'http://vendor').pathname;
  if (req.method === 'GET' && path === '/_bench/stats') {
    return json(res, 200, {
      transfers: transfers.map(({ id, t }) => ({ id, status: t.status, start: t.start, end: t.end, sent: t.sent(), done: t.done, aborted: t.aborted })),
    });
  }
  const file = /^\/files\/([A-Za-z0-9_.]+)$/.exec(path);
  if (req.method === 'GET' && file) return serveFile(req, res, file[1]!);
  if (req.headers.authorization !== `Bearer ${key}`)
    return json(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
  if (req.method === 'POST' && path === '/v1/videos') return json(res, 200, video(idFor('video', body)));
  const task = /^\/v1\/videos\/([A-Za-z0-9_]+)(\/content)?$/.exec(path);
  if (req.method === 'GET' && task) return task[2] ? serveFile(req, res, task[1]!) : json(res, 200, video(task[1]!));
  if (req.method === 'POST' && path === '/v1/images/generations') {
    const prompt = String((JSON.parse(body) as { prompt?: unknown }).prompt ?? '');
    return json(res, 200, { created: Math.floor(Date.now() / 1000), data: [{ url: `${base}/files/${idFor('file', prompt)}.bin` }] });
  }
  json(res, 404, { error: { message: `Invalid URL (${req.method} ${path}).`, type: 'invalid_request_error', param: null, code: null } });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('latin1')));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.stdout.write(`${JSON.stringify({ ready: 'vendor', url: base, key })}\n`);
});

const stop = (): void => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

/**
 * The S3 backend's bounds (src/archive/s3-backend.ts, docs/archive.md "When the archive is away"):
 * against a server that accepts connections and never answers, every call fails within its
 * timeout (GET, HEAD, the probe: the answer timeout; an upload: the idle timeout) instead of
 * hanging, and a GET's body that stops coming is cut after the idle timeout; against s3rver, a
 * GET's body outlives the answer timeout, an abort of the caller's signal once the answer came,
 * and a reader that pauses longer than the idle timeout, so no timer cuts a body being served.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ArchiveTimeout, taskFileKey } from '../../src/archive/backend.js';
import { openArchiveBackend } from '../../src/archive/open-backend.js';
import { startS3Server } from '../helpers/s3-server.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const KEY = taskFileKey('task_TTTTTTTTTTTTTTTTTTTTTTTT', 0);
const TIMEOUTS = { connectMs: 300, answerMs: 300, idleMs: 500 };
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** How long `p` took to settle, and its failure. */
async function failure(p: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  try {
    await p;
  } catch (err) {
    return { err, ms: performance.now() - started };
  }
  assert.fail('the call answered');
}

test('a server that never answers: GET, HEAD and the probe fail within the answer timeout, an upload within the idle timeout', async () => {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const { port } = silent.address() as { port: number };
  const b = await openArchiveBackend('s3://silent/gw', {
    pathStyle: true,
    s3Timeouts: TIMEOUTS,
    s3Client: { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials, forcePathStyle: true },
  });
  after(() => b.close());
  for (const [what, call] of [
    ['get', () => b.get(KEY, null)],
    ['stat', () => b.stat(KEY)],
    ['probe', () => b.probe(new AbortController().signal)],
  ] as const) {
    const { err, ms } = await failure(call());
    assert.ok(err instanceof ArchiveTimeout, `${what}: ${String(err)}`);
    assert.match(err.message, /within 300 ms \(GATEWAY_ARCHIVE_TIMEOUT_MS\)/);
    assert.ok(ms < 2_000, `${what} took ${Math.round(ms)} ms`);
  }
  // The SDK tries an upload's request three times, each cut by the idle timeout.
  const { err, ms } = await failure(b.put(KEY, Readable.from([Buffer.alloc(256 * 1024, 7)]), { contentType: null, maxBytes: 1 << 30 }));
  assert.match(String(err), /timed out|TimeoutError/i);
  assert.ok(ms < 10_000, `the upload took ${Math.round(ms)} ms`);
});

test('a GET whose body stops coming while it is read is cut after the idle timeout', async () => {
  const stalling = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 1_000_000 });
    res.write(Buffer.alloc(1_000, 1));
  });
  await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
  after(() => {
    stalling.closeAllConnections();
    stalling.close();
  });
  const { port } = stalling.address() as { port: number };
  const b = await openArchiveBackend('s3://stalling/gw', {
    pathStyle: true,
    s3Timeouts: TIMEOUTS,
    s3Client: { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials, forcePathStyle: true },
  });
  after(() => b.close());
  const body = await b.get(KEY, null);
  let read = 0;
  const { err, ms } = await failure(
    (async () => {
      for await (const c of body) read += (c as Buffer).length;
    })(),
  );
  assert.equal(read, 1_000);
  assert.ok(err instanceof ArchiveTimeout, String(err));
  assert.match(err.message, /for 500 ms \(GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS\)/);
  assert.ok(ms < 3_000, `cut after ${Math.round(ms)} ms`);
});

test("a GET's body outlives the answer timeout, an abort of the caller's signal once the answer came, and a reader pausing past the idle timeout", async () => {
  const s3 = await startS3Server();
  after(() => s3.close());
  const b = await openArchiveBackend(`s3://${s3.bucket}/gw`, { pathStyle: true, s3Timeouts: { ...TIMEOUTS, answerMs: 200 }, s3Client: s3.client });
  after(() => b.close());
  const size = 4 * 1024 * 1024 + 9;
  await b.put(KEY, Readable.from([Buffer.alloc(size, 3)]), { contentType: null, maxBytes: size });
  const caller = new AbortController();
  const body = await b.get(KEY, null, caller.signal);
  caller.abort(new Error('the caller gave up after the answer'));
  let read = 0;
  let first = true;
  for await (const c of body) {
    read += (c as Buffer).length;
    // The answer timer (200 ms) and the idle timeout (500 ms) would both have fired by now, had
    // the first been left running or the second counted the time the reader takes nothing.
    if (first) await sleep(3 * TIMEOUTS.idleMs);
    first = false;
  }
  assert.equal(read, size);
});

/**
 * The result archive's S3 failing under a real `gateway start` process (docs/archive.md, "When the
 * archive is away"): s3rver runs in a child process of its own, killed (connections refused) or
 * stopped and continued (a server that hangs). Archived downloads are then served by the vendor
 * (never a 5xx while the vendor has the file, never a hang), the archive is away
 * (`gateway_archive_up` 0) until it answers again, a copy under way is cut and retried rather than
 * held, and once S3 is back every file is archived and served from it again. Small timeouts keep
 * each case a few seconds long.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { generatedBytes } from '../../src/sim/generated-file.js';
import { channelEnv } from '../helpers/channel-env.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import type { Running } from '../helpers/process.js';
import { runCli } from '../helpers/process.js';
import { type S3Process, startS3Process } from '../helpers/s3-process.js';
import { until } from '../helpers/until.js';
import { completedVideo, seedOf, startVideoVendor, VIDEO_VENDOR_KEY, type VideoVendor } from './video-vendor.js';

const MB = 2 ** 20;
const ADMIN = 'archive-outage-admin';
/** GATEWAY_ARCHIVE_TIMEOUT_MS here: a download waits at most this for the archive. */
const TIMEOUT_MS = 500;
/** What a download may take at most while the archive is away or hangs: its budget, the vendor's answer, and room for a loaded machine. */
const DOWNLOAD_BOUND_MS = 8_000;

/** A gateway over a fresh store, its video channel on `vendor`, its archive in `s3`, with small timeouts. */
function gatewayEnv(tmp: string, vendor: VideoVendor, s3: S3Process): NodeJS.ProcessEnv {
  return {
    ...channelEnv({ EPSILON_BASE_URL: vendor.url, EPSILON_API_KEY: VIDEO_VENDOR_KEY }),
    ...s3.env,
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DB: join(tmp, 'gateway.db'),
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_TASK_LEASE_MS: '1000',
    GATEWAY_WATCH: '0',
    LOG_LEVEL: 'info',
    GATEWAY_ARCHIVE: `s3://${s3.bucket}/gw`,
    GATEWAY_ARCHIVE_TIMEOUT_MS: String(TIMEOUT_MS),
    GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS: '500',
    GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS: '1000',
  };
}

/** The task's archive as GET /admin/tasks/{id} shows it. */
async function archiveOf(base: string, id: string): Promise<{ files: { index: number; size: number }[]; job: { attempts: number } | null }> {
  const res = await fetch(`${base}/admin/tasks/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { archive: { files: { index: number; size: number }[]; job: { attempts: number } | null } };
  return body.archive;
}

/** One sample of /metrics (0 when absent). */
async function metric(base: string, sample: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

/** Downloads a task's file, bounded in time; its status, whether the archive served it (its ETag), its bytes and how long it took. */
async function download(base: string, key: string, id: string): Promise<{ status: number; archived: boolean; body: Buffer; ms: number; headers: Headers }> {
  const started = performance.now();
  const res = await fetch(`${base}/v1/videos/${id}/content`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(DOWNLOAD_BOUND_MS) });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, archived: res.headers.get('etag')?.startsWith('"a-') ?? false, body, ms: performance.now() - started, headers: res.headers };
}

describe('result archive: its S3 refused or hung, under a real gateway process', () => {
  const running: Running[] = [];
  const cleanup: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const p of running) await p.stop('SIGKILL');
    for (const c of cleanup.reverse()) await c();
  });

  /** A vendor, an S3 child, a gateway over them, and a key. */
  async function setUp(name: string) {
    const tmp = mkdtempSync(join(tmpdir(), `gw-archive-${name}-`));
    cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
    const vendor = await startVideoVendor();
    cleanup.push(() => vendor.close());
    const s3 = await startS3Process();
    cleanup.push(() => s3.close());
    const env = gatewayEnv(tmp, vendor, s3);
    const key = runCli(['tokens', 'create', '--group', 'default'], env).stdout.trim();
    assert.match(key, /^gw-/);
    const gw = await startGatewayProcess(env);
    running.push(gw.proc);
    return { vendor, s3, key, gw };
  }

  test('S3 refused: archived downloads are served by the vendor (never a 5xx); a file neither has is 503 upstream_unavailable', async () => {
    const { vendor, s3, key, gw } = await setUp('refused');
    const size = 3 * MB + 5;
    const a = await completedVideo(gw.base, key, vendor, size);
    await until('the copy is done', async () => (await archiveOf(gw.base, a.id)).files[0], 15_000);
    const first = await download(gw.base, key, a.id);
    assert.equal(first.status, 200);
    assert.ok(first.archived, 'served from the archive while S3 is up');
    assert.equal(await metric(gw.base, 'gateway_archive_up'), 1);

    await s3.kill();
    const bytes = generatedBytes(seedOf(a.upstream), 0, size - 1);
    for (let i = 0; i < 3; i++) {
      const d = await download(gw.base, key, a.id);
      assert.equal(d.status, 200, `download ${i} while S3 refuses: ${d.body.toString('utf8', 0, 200)}`);
      assert.equal(d.archived, false, 'served by the vendor');
      assert.ok(d.body.equals(bytes), "the vendor's bytes");
    }
    assert.equal(await metric(gw.base, 'gateway_archive_up'), 0);
    assert.ok((await metric(gw.base, 'gateway_archive_fallbacks_total{reason="away"}')) >= 3, 'each fallback counted');
    const ready = await fetch(`${gw.base}/readyz`);
    assert.equal(ready.status, 200, 'an archive outage does not take the replica out');
    assert.equal(((await ready.json()) as { archive?: string }).archive, 'unreachable');
    await gw.proc.waitFor(/"msg":"result archive unreachable: downloads are served by the vendor/, 5_000);

    vendor.forget(a.upstream);
    const gone = await download(gw.base, key, a.id);
    assert.equal(gone.status, 503, gone.body.toString());
    assert.equal(gone.headers.get('retry-after'), '5', 'the client is told when to try again');
    const err = JSON.parse(gone.body.toString()) as { error: { code: string; message: string } };
    assert.equal(err.error.code, 'upstream_unavailable');
    assert.match(err.error.message, /archive .*unreachable.*vendor no longer serves the file/);
    assert.doesNotMatch(gw.proc.output(), /"status":500/);
    await gw.proc.stop('SIGTERM');
  });

  test('S3 hung (SIGSTOP): downloads go to the vendor within the budget, a copy under way is cut and retried; after SIGCONT all is archived and served from it', async () => {
    const { vendor, s3, key, gw } = await setUp('hung');
    const sizeA = 2 * MB + 1;
    const a = await completedVideo(gw.base, key, vendor, sizeA);
    await until('the first copy is done', async () => (await archiveOf(gw.base, a.id)).files[0], 15_000);

    s3.pause();
    // A copy starts while S3 hangs: it is claimed (nothing has told the gateway yet) and sticks in S3.
    const sizeB = 20 * MB + 3;
    const b = await completedVideo(gw.base, key, vendor, sizeB);
    await until('the copy of the new task is under way', async () => (await metric(gw.base, 'gateway_archive_copying')) === 1, 10_000);

    const bytesA = generatedBytes(seedOf(a.upstream), 0, sizeA - 1);
    for (let i = 0; i < 2; i++) {
      const d = await download(gw.base, key, a.id);
      assert.equal(d.status, 200, `download ${i} while S3 hangs`);
      assert.equal(d.archived, false, 'served by the vendor');
      assert.ok(d.body.equals(bytesA), "the vendor's bytes");
    }
    await until('the archive is away', async () => (await metric(gw.base, 'gateway_archive_up')) === 0, 5_000);
    // While away, downloads go straight to the vendor: no wait for the archive.
    const quick = await download(gw.base, key, a.id);
    assert.equal(quick.status, 200);
    assert.ok(quick.ms < TIMEOUT_MS + 2_000, `a download while away took ${Math.round(quick.ms)} ms`);
    assert.ok((await metric(gw.base, 'gateway_dependency_timeouts_total{dependency="archive"}')) >= 1, 'the hung call is counted as a timeout');

    // The stuck copy is released and counted as a failed attempt, not held at attempt 0.
    await until('the hung copy is cut and counted', async () => ((await archiveOf(gw.base, b.id)).job?.attempts ?? 0) >= 1, 10_000);
    await until('no copy is held', async () => (await metric(gw.base, 'gateway_archive_copying')) === 0, 5_000);
    // Logged before the copy is let go, but its line comes through the process's stdout pipe, which
    // the test may read after the metric's answer came through a socket.
    await gw.proc.waitFor(/"msg":"archive copy failed; it is tried again"/, 5_000);

    s3.resume();
    await until('the archive is back', async () => (await metric(gw.base, 'gateway_archive_up')) === 1, 10_000);
    await until('the cut copy is done again', async () => (await archiveOf(gw.base, b.id)).files[0], 15_000);
    assert.equal((await archiveOf(gw.base, b.id)).files[0]!.size, sizeB);
    for (const [t, size] of [
      [a, sizeA],
      [b, sizeB],
    ] as const) {
      const d = await download(gw.base, key, t.id);
      assert.equal(d.status, 200);
      assert.ok(d.archived, `${t.id} served from the archive again`);
      assert.ok(d.body.equals(generatedBytes(seedOf(t.upstream), 0, size - 1)));
    }
    assert.doesNotMatch(gw.proc.output(), /"status":5\d\d/);
    await gw.proc.stop('SIGTERM');
  });
});

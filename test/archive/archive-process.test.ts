/**
 * The result archive in real `gateway start` processes (docs/archive.md), over the shipped video
 * route and a vendor of generated files: a 1 GB result is copied into a directory and into an S3
 * bucket (s3rver on loopback), then served from there, Range included, while the gateway's memory
 * stays bounded (its peak RSS, VmHWM, grows by a fraction of the file) and the vendor is not asked
 * again. A gateway killed (SIGKILL) mid-copy leaves no file where downloads look; the next one
 * does the copy again once the lease runs out.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { generatedBytes } from '../../src/sim/generated-file.js';
import { channelEnv } from '../helpers/channel-env.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import type { Running } from '../helpers/process.js';
import { runCli } from '../helpers/process.js';
import { startS3Server } from '../helpers/s3-server.js';
import { until } from '../helpers/until.js';
import { completedVideo, seedOf, startVideoVendor, VIDEO_VENDOR_KEY, type VideoVendor } from './video-vendor.js';

const GB = 2 ** 30;
const MB = 2 ** 20;
/** What the copy and a download together may add to the gateway's peak RSS: generous, and far below the file. */
const RSS_BOUND = 200 * MB;
const ADMIN = 'archive-admin-key';

/** VmRSS and VmHWM (peak) of a process, in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A gateway process environment over a fresh store, the video channel on `vendor`. */
function gatewayEnv(tmp: string, vendor: VideoVendor, archive: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...channelEnv({ EPSILON_BASE_URL: vendor.url, EPSILON_API_KEY: VIDEO_VENDOR_KEY }),
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DB: join(tmp, 'gateway.db'),
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_TASK_LEASE_MS: '1000',
    GATEWAY_WATCH: '0',
    LOG_LEVEL: 'info',
    GATEWAY_ARCHIVE_MAX_MB: '2048',
    ...archive,
  };
}

/** The task's archived files, as GET /admin/tasks/{id} shows them. */
async function archivedFiles(base: string, id: string): Promise<{ index: number; size: number }[]> {
  const res = await fetch(`${base}/admin/tasks/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { archive?: { files: { index: number; size: number }[] } };
  return body.archive?.files ?? [];
}

/**
 * Downloads the whole file through the gateway, checking every byte against the vendor's as it
 * comes (a chunk at a time: nothing held), and a range of it; returns how many bytes came.
 */
async function downloadAndCheck(base: string, key: string, id: string, seed: number, size: number): Promise<number> {
  const auth = { authorization: `Bearer ${key}` };
  const res = await fetch(`${base}/v1/videos/${id}/content`, { headers: auth });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-length'), String(size));
  assert.ok(res.headers.get('etag')?.startsWith('"a-'), 'served from the archive');
  let pos = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const c = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (!c.equals(generatedBytes(seed, pos, pos + c.length - 1))) assert.fail(`the bytes at ${pos} differ from the vendor's`);
    pos += c.length;
  }
  const from = size - 3 * MB - 7;
  const part = await fetch(`${base}/v1/videos/${id}/content`, { headers: { ...auth, range: `bytes=${from}-${from + 99}` } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes ${from}-${from + 99}/${size}`);
  assert.ok(Buffer.from(await part.arrayBuffer()).equals(generatedBytes(seed, from, from + 99)));
  return pos;
}

describe('result archive: real gateway processes, a 1 GB result', () => {
  const running: Running[] = [];
  const cleanup: (() => Promise<void> | void)[] = [];
  after(async () => {
    for (const p of running) await p.stop('SIGKILL');
    for (const c of cleanup.reverse()) await c();
  });

  test('directory: a copy cut by SIGKILL is done again by the next gateway; then served with bounded memory, the vendor not asked', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gw-archive-proc-'));
    cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
    const vendor = await startVideoVendor();
    cleanup.push(() => vendor.close());
    const env = gatewayEnv(tmp, vendor, { GATEWAY_ARCHIVE: join(tmp, 'archive') });
    const key = runCli(['tokens', 'create', '--group', 'default'], env).stdout.trim();
    assert.match(key, /^gw-/);

    const first = await startGatewayProcess(env);
    running.push(first.proc);
    const { id } = await completedVideo(first.base, key, vendor, GB);
    const upstream = await until('the vendor is asked for the file', () => [...vendorIds(vendor)].find((v) => vendor.contentAnswers(v).length > 0));
    await until('a quarter of the copy is sent', () => (vendor.contentAnswers(upstream)[0]?.sent() ?? 0) > GB / 4, 60_000);
    await first.proc.stop('SIGKILL');
    const final = join(tmp, 'archive', 'tasks', id, '0');
    assert.equal(existsSync(final), false, 'nothing half written where downloads look');

    const second = await startGatewayProcess(env);
    running.push(second.proc);
    const pid = second.proc.child.pid!;
    const idle = memoryOf(pid).rss;
    await until('the copy is done again', async () => (await archivedFiles(second.base, id))[0], 120_000);
    assert.deepEqual(await archivedFiles(second.base, id), [{ ...(await archivedFiles(second.base, id))[0]!, index: 0, size: GB }]);
    const answers = vendor.contentAnswers(upstream);
    assert.equal(answers.length, 2, 'the cut copy, then the whole one');
    assert.equal(answers[1]!.done, true);
    const afterCopy = memoryOf(pid);
    assert.ok(afterCopy.peak - idle < RSS_BOUND, `copying 1 GB raised the peak RSS by ${Math.round((afterCopy.peak - idle) / MB)} MB`);

    assert.equal(await downloadAndCheck(second.base, key, id, seedOf(upstream), GB), GB);
    const afterServe = memoryOf(pid);
    assert.ok(afterServe.peak - idle < RSS_BOUND, `serving 1 GB raised the peak RSS by ${Math.round((afterServe.peak - idle) / MB)} MB`);
    assert.equal(vendor.contentAnswers(upstream).length, 2, 'downloads came from the archive');
    await second.proc.stop('SIGTERM');
  });

  test('S3 bucket (s3rver): copied by multipart upload and served with bounded memory, the vendor not asked', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gw-archive-s3-'));
    cleanup.push(() => rmSync(tmp, { recursive: true, force: true }));
    const s3 = await startS3Server();
    cleanup.push(() => s3.close());
    const vendor = await startVideoVendor();
    cleanup.push(() => vendor.close());
    const env = gatewayEnv(tmp, vendor, { GATEWAY_ARCHIVE: `s3://${s3.bucket}/gw`, ...s3.env });
    const key = runCli(['tokens', 'create', '--group', 'default'], env).stdout.trim();
    const gw = await startGatewayProcess(env);
    running.push(gw.proc);
    const pid = gw.proc.child.pid!;
    const idle = memoryOf(pid).rss;
    const { id } = await completedVideo(gw.base, key, vendor, GB);
    await until('the copy is done', async () => (await archivedFiles(gw.base, id))[0], 120_000);
    const upstream = [...vendorIds(vendor)].find((v) => vendor.contentAnswers(v).length > 0)!;
    const afterCopy = memoryOf(pid);
    assert.ok(afterCopy.peak - idle < RSS_BOUND, `copying 1 GB raised the peak RSS by ${Math.round((afterCopy.peak - idle) / MB)} MB`);
    assert.equal(await downloadAndCheck(gw.base, key, id, seedOf(upstream), GB), GB);
    assert.ok(memoryOf(pid).peak - idle < RSS_BOUND, 'serving 1 GB from the bucket holds none of it');
    assert.equal(vendor.contentAnswers(upstream).length, 1, 'one copy; downloads came from the bucket');
    await gw.proc.stop('SIGTERM');
  });
});

/** The vendor ids it made so far (`video_1b…`, `video_2b…`). */
function vendorIds(vendor: VideoVendor): string[] {
  const out: string[] = [];
  for (let i = 1; i <= 20; i++) for (const size of [GB]) if (vendor.contentAnswers(`video_${i}b${size}`).length > 0) out.push(`video_${i}b${size}`);
  return out;
}

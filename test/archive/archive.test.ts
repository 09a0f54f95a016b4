/**
 * The result archive in a gateway (docs/archive.md), against a directory and against an S3 bucket
 * (s3rver on loopback): a completed task's file is copied once, then served from the archive
 * (whole, by range, 416, 304) without asking the vendor again; a copy that fails is retried and
 * never fails the task; a sync route that asks for it has its links archived; the purge deletes
 * files past their retention, after which a download asks the vendor again; a route that says
 * `archive: false` and a token with keep_days 0 are never archived.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ArchiveBackend } from '../../src/archive/backend.js';
import { openArchiveBackend } from '../../src/archive/open-backend.js';
import { keepDaysFor } from '../../src/archive/retention.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { generatedBytes } from '../../src/sim/generated-file.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { makeConfigDir } from '../helpers/config-dir.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';
import { until } from '../helpers/until.js';
import { archiveConfig, startArchiveVendor, type ArchiveVendor } from './archive-vendor.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const DAY = 86_400_000;
const BODY = { 'body.json': { type: 'object' } };

function suite(name: string, openBackend: () => Promise<{ backend: ArchiveBackend; where: string }>) {
  describe(`result archive: ${name}`, () => {
    let vendor: ArchiveVendor;
    let store: Store;
    let gw: Gateway;
    let key: string;
    let tokenId: string;
    let dir: string;
    let backend: ArchiveBackend;
    /** Added to the gateway's clock: the purge test moves time on. */
    let offset = 0;
    let seed = 1000;

    before(async () => {
      vendor = await startArchiveVendor();
      dir = makeConfigDir('archive', { ...BODY, ...archiveConfig(vendor.url, { drawArchive: '{ keep_days: 2 }' }) });
      const snapshot = loadConfigOrThrow(dir, { env: {} });
      store = await openStore(':memory:');
      key = generateKey();
      tokenId = (await store.createToken({ name: 'archive', keyHash: hashKey(key), group: 'default', models: null, quota: null })).id;
      ({ backend } = await openBackend());
      gw = createGateway({
        snapshot: () => snapshot,
        store,
        log: silentLogger(),
        clock: () => new Date(Date.now() + offset),
        lease: { owner: 'r1', ms: 2_000, soleReplica: true },
        archive: {
          backend,
          settings: { keepDays: 7, maxBytes: 64 * 2 ** 20, copies: 2, attempts: 3, tickMs: 50, retryMs: 100, purgeMs: 3_600_000, totalsMs: 0 },
        },
      });
      await gw.listen(0);
    });
    after(async () => {
      await gw.close();
      await store.close();
      await vendor.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
    /** Submits a job for the file (seed, size) and waits until it is completed. */
    const completedJob = async (size: number) => {
      const s = ++seed;
      const res = await fetch(`${gw.url()}/jobs`, { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'm', seed: s, size }) });
      const { id } = (await res.json()) as { id: string };
      assert.equal(res.status, 200);
      await until('the task completes', async () => (await store.getTask(id))?.status === 'completed');
      return { id, seed: s, size };
    };
    const archived = (owner: string) => until(`the copy of ${owner}`, async () => (await store.getArchivedFiles(owner))[0], 10_000);
    const download = (id: string, headers: Record<string, string> = {}) => fetch(`${gw.url()}/jobs/${id}/content`, { headers: { ...auth(), ...headers } });

    test('a completed task is copied once, then served from the archive (whole, ranges, 416, 304) and the vendor is not asked again', async () => {
      const job = await completedJob(3 * 2 ** 20 + 5);
      const file = await archived(job.id);
      assert.equal(file.size, job.size);
      assert.equal(file.contentType, 'video/mp4');
      assert.equal(file.expiresAt - file.archivedAt, 7 * DAY, 'the default retention');
      await until('the job is done (just after its file is recorded)', async () => (await store.getArchiveJob(job.id)) === null);
      const asked = vendor.fileAnswers(job.seed);
      assert.equal(asked, 1, 'one copy, nothing else asked the vendor');

      const whole = await download(job.id);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-length'), String(job.size));
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.equal(whole.headers.get('content-type'), 'video/mp4');
      assert.equal(whole.headers.get('x-content-type-options'), 'nosniff');
      const etag = whole.headers.get('etag')!;
      assert.match(etag, /^"a-[A-Za-z0-9_-]{22}"$/);
      assert.ok(Buffer.from(await whole.arrayBuffer()).equals(generatedBytes(job.seed, 0, job.size - 1)));

      const part = await download(job.id, { range: 'bytes=1000000-1000099' });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes 1000000-1000099/${job.size}`);
      assert.ok(Buffer.from(await part.arrayBuffer()).equals(generatedBytes(job.seed, 1_000_000, 1_000_099)));
      const tail = await download(job.id, { range: 'bytes=-10' });
      assert.equal(tail.status, 206);
      assert.ok(Buffer.from(await tail.arrayBuffer()).equals(generatedBytes(job.seed, job.size - 10, job.size - 1)));
      const resumed = await download(job.id, { range: 'bytes=3145728-', 'if-range': etag });
      assert.equal(resumed.status, 206);
      assert.equal((await resumed.arrayBuffer()).byteLength, 5);
      const otherVersion = await download(job.id, { range: 'bytes=3145728-', 'if-range': '"not-this-one"' });
      assert.equal(otherVersion.status, 200, 'If-Range naming another version: the whole file');
      await otherVersion.body?.cancel();
      const past = await download(job.id, { range: `bytes=${job.size}-` });
      assert.equal(past.status, 416);
      assert.equal(past.headers.get('content-range'), `bytes */${job.size}`);
      await past.arrayBuffer();
      const fresh = await download(job.id, { 'if-none-match': etag });
      assert.equal(fresh.status, 304);
      assert.equal(vendor.fileAnswers(job.seed), asked, 'every download came from the archive');
    });

    test('a copy that fails is retried later and never fails the task; downloads ask the vendor meanwhile', async () => {
      vendor.failNext(2);
      const job = await completedJob(200_000);
      const job1 = await until('the first failed attempt', async () => {
        const j = await store.getArchiveJob(job.id);
        return j && j.attempts >= 1 ? j : null;
      });
      assert.match(job1.lastError ?? '', /HTTP 500/);
      const file = await archived(job.id);
      assert.equal(file.size, job.size);
      assert.equal((await store.getTask(job.id))?.status, 'completed', 'the task is untouched');
      assert.equal(vendor.fileAnswers(job.seed), 3, 'two failed attempts, then the copy');
      const copies = await gw.metrics.text();
      assert.match(copies, /gateway_archive_copies_total\{outcome="retry"\} [2-9]/);
      assert.match(copies, /gateway_archive_copies_total\{outcome="done"\} [1-9]/);
    });

    test('a file over GATEWAY_ARCHIVE_MAX_MB is given up at once (not retried) and stays with the vendor', async () => {
      const job = await completedJob(64 * 2 ** 20 + 1);
      const given = await until('the copy given up', async () => {
        const j = await store.getArchiveJob(job.id);
        return j?.failed ? j : null;
      });
      assert.equal(given.attempts, 1, 'one attempt: copying it again cannot help');
      assert.match(given.lastError ?? '', /larger than the archive takes/);
      assert.deepEqual(await store.getArchivedFiles(job.id), []);
      assert.match(await gw.metrics.text(), /gateway_archive_copies_total\{outcome="failed"\} [1-9]/);
      const res = await download(job.id, { range: 'bytes=0-9' });
      assert.equal(res.status, 206, 'served by the vendor');
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(generatedBytes(job.seed, 0, 9)));
    });

    test('a sync route that asks for it has its links archived and served from the archive', async () => {
      const s = ++seed;
      const res = await fetch(`${gw.url()}/draw`, { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'd', seed: s, size: 70_000 }) });
      const answer = (await res.json()) as { files: { url: string }[] };
      assert.equal(res.status, 200, JSON.stringify(answer));
      const link = answer.files[0]!.url;
      const linkId = (await import('../../src/links/hand-out.js')).linkIdOf(link.split('/').pop()!);
      const stored = await store.getLink(linkId, Date.now());
      assert.ok(stored && stored.expiresAt - stored.createdAt === 2 * DAY, 'the link serves as long as its file is kept');
      const file = await archived(linkId);
      assert.equal(file.expiresAt - file.archivedAt, 2 * DAY, "the route's keep_days");
      const before = vendor.fileAnswers(s);
      const got = await fetch(link, { headers: { range: 'bytes=10-19' } });
      assert.equal(got.status, 206);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(generatedBytes(s, 10, 19)));
      assert.equal(vendor.fileAnswers(s), before, 'served from the archive');
    });

    test('the metrics say what the archive holds', async () => {
      // A job is finished just after its file is recorded: wait for the last one to be.
      await until('no copy due', async () => (await store.archiveTotals()).queued === 0);
      const text = await gw.metrics.text();
      assert.match(text, /gateway_archive_files [1-9]/);
      assert.match(text, /gateway_archive_bytes [1-9][0-9]{5,}/);
      assert.match(text, /gateway_archive_jobs\{state="queued"\} 0/);
    });

    test("a token's keep_days wins over the default; 0 keeps none of its files", async () => {
      await store.setTokenArchiveDays(tokenId, 1);
      const short = await completedJob(10_000);
      assert.equal((await archived(short.id)).expiresAt - (await archived(short.id)).archivedAt, DAY);
      await store.setTokenArchiveDays(tokenId, 0);
      const none = await completedJob(10_000);
      await until('the job is done with', async () => (await store.getArchiveJob(none.id)) === null);
      assert.deepEqual(await store.getArchivedFiles(none.id), []);
      await store.setTokenArchiveDays(tokenId, null);
    });

    test('the purge deletes files past their retention; a download then asks the vendor again', async () => {
      const job = await completedJob(50_000);
      const file = await archived(job.id);
      assert.ok(await backend.stat(file.key));
      offset = 8 * DAY;
      try {
        assert.ok((await gw.archive!.purge()) >= 1);
      } finally {
        offset = 0;
      }
      assert.equal(await backend.stat(file.key), null, 'deleted from the backend');
      assert.deepEqual(await store.getArchivedFiles(job.id), []);
      const before = vendor.fileAnswers(job.seed);
      const res = await download(job.id);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.equal(vendor.fileAnswers(job.seed), before + 1, 'from the vendor');
    });
  });
}

let tmp = '';
suite('directory', async () => {
  tmp = mkdtempSync(join(tmpdir(), 'gw-archive-'));
  return { backend: await openArchiveBackend(join(tmp, 'files')), where: tmp };
});
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

let s3: S3Server | null = null;
suite('S3 (s3rver)', async () => {
  s3 = await startS3Server();
  return { backend: await openArchiveBackend(`s3://${s3.bucket}/results`, { pathStyle: true, s3Client: s3.client }), where: s3.endpoint };
});
after(async () => {
  await s3?.close();
});

test('a two-step vendor whose file URL expired: the copy looks the files up again, once, and copies the fresh one', async () => {
  const vendor = await startArchiveVendor();
  const dir = makeConfigDir('archive-two-step', { ...BODY, ...archiveConfig(vendor.url, { twoStep: true }) });
  const files = mkdtempSync(join(tmpdir(), 'gw-archive-two-step-'));
  const store = await openStore(':memory:');
  const key = generateKey();
  await store.createToken({ name: 'two-step', keyHash: hashKey(key), group: 'default', models: null, quota: null });
  const snapshot = loadConfigOrThrow(dir, { env: {} });
  const gw = createGateway({
    snapshot: () => snapshot,
    store,
    log: silentLogger(),
    archive: { backend: await openArchiveBackend(files), settings: { keepDays: 7, maxBytes: 2 ** 30, copies: 1, attempts: 3, tickMs: 50, retryMs: 60_000 } },
  });
  await gw.listen(0);
  try {
    vendor.goneNext(1);
    const res = await fetch(`${gw.url()}/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', seed: 77, size: 100_000 }),
    });
    const { id } = (await res.json()) as { id: string };
    await until('the task completes', async () => (await store.getTask(id))?.status === 'completed');
    const file = await until('the copy', async () => (await store.getArchivedFiles(id))[0], 10_000);
    assert.equal(file.size, 100_000);
    // Counted from the expired answer, not from when the test saw the task complete: the copier
    // may have looked again before this test read the count (it did, with test files run at once).
    const expired = vendor.transfers.find((t) => t.status === 403);
    assert.ok(expired, 'the copy met the expired URL');
    assert.equal(vendor.resultCalls() - expired.resultsBefore, 1, 'one lookup of the files again');
    assert.deepEqual(
      vendor.transfers.map((t) => t.status),
      [403, 200],
      'the expired URL, then the fresh one: no retry was needed (a retry would wait a minute here)',
    );
  } finally {
    await gw.close();
    await store.close();
    await vendor.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
});

test('retention: a route saying 0 is never archived; a sync route only when it asks; then the token, the route, the default', () => {
  const r = (keepDays: number | null) => ({ archive: { keepDays } });
  const none = { archive: null };
  assert.equal(keepDaysFor('task', r(0), 30, 7), 0);
  assert.equal(keepDaysFor('link', none, 30, 7), 0);
  assert.equal(keepDaysFor('task', none, null, 7), 7);
  assert.equal(keepDaysFor('task', undefined, null, 7), 7, 'a route no longer configured: the default');
  assert.equal(keepDaysFor('task', r(3), null, 7), 3);
  assert.equal(keepDaysFor('task', r(3), 30, 7), 30, "the token's wins, longer");
  assert.equal(keepDaysFor('link', r(null), 1, 7), 1, "the token's wins, shorter");
  assert.equal(keepDaysFor('task', r(3), 0, 7), 0, 'a token with 0 keeps nothing');
});

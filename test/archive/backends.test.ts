/**
 * The archive's two backends (src/archive/), held to one contract: a directory, and an S3 bucket
 * served by s3rver on loopback through the official AWS SDK. Put streams and reports the size,
 * get serves a byte range, a file over the bound is refused and leaves nothing, a put whose source
 * fails leaves nothing, delete is idempotent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ArchiveMissing, ArchiveTooLarge, type ArchiveBackend, checkKey, linkFileKey, taskFileKey } from '../../src/archive/backend.js';
import { openArchiveBackend } from '../../src/archive/open-backend.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** `n` bytes of a repeating pattern, made as they are read. */
function pattern(n: number, chunk = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= n) return void this.push(null);
      const len = Math.min(chunk, n - sent);
      const b = Buffer.allocUnsafe(len);
      for (let i = 0; i < len; i++) b[i] = (sent + i) % 251;
      sent += len;
      this.push(b);
    },
  });
}

async function text(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const KEY = taskFileKey('task_AAAAAAAAAAAAAAAAAAAAAAAA', 0);

function contract(name: string, open: () => Promise<ArchiveBackend>) {
  describe(name, () => {
    let b: ArchiveBackend;
    before(async () => {
      b = await open();
    });
    after(async () => {
      await b.close();
    });

    test('put streams a file, stat says its size, get serves it whole and by range', async () => {
      const size = 20 * 1024 * 1024 + 13;
      const put = await b.put(KEY, pattern(size), { contentType: 'video/mp4', maxBytes: size });
      assert.equal(put.size, size);
      assert.deepEqual(await b.stat(KEY), { size });
      const part = await text(await b.get(KEY, { start: 1000, end: 1009 }));
      assert.deepEqual(
        [...part],
        Array.from({ length: 10 }, (_, i) => (1000 + i) % 251),
      );
      let whole = 0;
      for await (const c of await b.get(KEY, null)) whole += (c as Buffer).length;
      assert.equal(whole, size);
    });

    test('a file over maxBytes is refused and nothing is left under its key', async () => {
      const key = taskFileKey('task_BBBBBBBBBBBBBBBBBBBBBBBB', 1);
      await assert.rejects(b.put(key, pattern(9 * 1024 * 1024), { contentType: null, maxBytes: 1024 * 1024 }), ArchiveTooLarge);
      assert.equal(await b.stat(key), null);
    });

    test('a source that fails midway leaves nothing under its key', async () => {
      const key = linkFileKey('a'.repeat(64));
      let sent = 0;
      const broken = new Readable({
        read() {
          if (sent >= 3) return void this.destroy(new Error('vendor cut the file off'));
          sent++;
          this.push(Buffer.alloc(64 * 1024, 1));
        },
      });
      await assert.rejects(b.put(key, broken, { contentType: null, maxBytes: 1 << 30 }), /cut the file off/);
      assert.equal(await b.stat(key), null);
    });

    test('get of a missing key is ArchiveMissing; delete is idempotent', async () => {
      await b.delete(KEY);
      assert.equal(await b.stat(KEY), null);
      await assert.rejects(b.get(KEY, null), ArchiveMissing);
      await b.delete(KEY);
    });
  });
}

let dir = '';
contract('directory backend', async () => {
  dir = mkdtempSync(join(tmpdir(), 'archive-dir-'));
  return openArchiveBackend(join(dir, 'files'));
});
after(() => {
  if (dir) {
    // Nothing half written is left in the folder of files being written.
    assert.deepEqual(readdirSync(join(dir, 'files', '.incoming')), []);
    rmSync(dir, { recursive: true, force: true });
  }
});

let s3: S3Server | null = null;
contract('S3 backend (s3rver)', async () => {
  s3 = await startS3Server();
  return openArchiveBackend(`s3://${s3.bucket}/gw`, { pathStyle: true, s3Client: s3.client });
});
after(async () => {
  await s3?.close();
});

test('keys are made from the gateway ids only; anything else is refused', () => {
  assert.equal(taskFileKey('task_AAAAAAAAAAAAAAAAAAAAAAAA', 3), 'tasks/task_AAAAAAAAAAAAAAAAAAAAAAAA/3');
  for (const bad of ['tasks/../etc/0', 'tasks/task_x/../../0', 'links/ABC', '/abs', 'tasks/task_a/1000'])
    assert.throws(() => checkKey(bad), /not an archive key/);
});

test('GATEWAY_ARCHIVE that is neither a directory nor s3:// is refused', async () => {
  await assert.rejects(openArchiveBackend('http://x/y'), /GATEWAY_ARCHIVE/);
  await assert.rejects(openArchiveBackend('s3://A_B'), /GATEWAY_ARCHIVE/);
});

/**
 * The archive's settings at start (docs/operating.md): a malformed one stops `gateway start`
 * (exit 2) with a message naming the variable, before anything listens; GATEWAY_ARCHIVE unset
 * starts no archive.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { archiveFromEnv } from '../../src/archive/archive-env.js';
import { channelEnv } from '../helpers/channel-env.js';
import { startCli } from '../helpers/process.js';

const tmp = mkdtempSync(join(tmpdir(), 'gw-archive-settings-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a malformed archive setting stops gateway start with exit 2 naming it', async () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ GATEWAY_ARCHIVE_KEEP_DAYS: '0' }, /GATEWAY_ARCHIVE_KEEP_DAYS must be whole days from 1 to 3650/],
    [{ GATEWAY_ARCHIVE_MAX_MB: 'lots' }, /GATEWAY_ARCHIVE_MAX_MB must be whole megabytes/],
    [{ GATEWAY_ARCHIVE_COPIES: '65' }, /GATEWAY_ARCHIVE_COPIES must be a whole number from 1 to 64/],
    [{ GATEWAY_ARCHIVE_TIMEOUT_MS: '10s' }, /GATEWAY_ARCHIVE_TIMEOUT_MS must be a whole number of ms from 100 to 600000/],
    [{ GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS: '50' }, /GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS must be a whole number of ms from 100/],
    [{ GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS: '1.5' }, /GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS must be a whole number of ms from 100 to 3600000/],
    [{ GATEWAY_ARCHIVE: 'ftp://somewhere/x' }, /GATEWAY_ARCHIVE: a directory, or s3:\/\/<bucket>/],
  ];
  for (const [i, [env, message]] of cases.entries()) {
    const proc = startCli(['start'], {
      ...channelEnv(),
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_DB: join(tmp, `s${i}.db`),
      GATEWAY_WATCH: '0',
      GATEWAY_ARCHIVE: join(tmp, 'archive'),
      ...env,
    });
    const code = await new Promise<number | null>((resolve) => proc.child.once('exit', (c) => resolve(c)));
    assert.equal(code, 2, proc.output());
    assert.match(proc.output(), message);
    assert.doesNotMatch(proc.output(), /gateway listening/);
  }
});

test('GATEWAY_ARCHIVE unset or empty: no archive; its companions are read only with it', () => {
  assert.equal(archiveFromEnv({}), null);
  assert.equal(archiveFromEnv({ GATEWAY_ARCHIVE: '  ', GATEWAY_ARCHIVE_KEEP_DAYS: 'x' }), null);
  assert.deepEqual(archiveFromEnv({ GATEWAY_ARCHIVE: 's3://b-1/p', GATEWAY_ARCHIVE_S3_PATH_STYLE: 'yes' }), {
    spec: 's3://b-1/p',
    keepDays: 7,
    maxMb: 4096,
    copies: 2,
    attempts: 8,
    s3PathStyle: true,
    s3ConnectTimeoutMs: 3000,
    timeoutMs: 10000,
    idleTimeoutMs: 30000,
  });
});

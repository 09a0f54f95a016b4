/**
 * The SQLite store holds the key hashes and the ledger: a file the gateway makes is its owner's
 * alone (0600, in a directory made 0700), and so are SQLite's -wal and -shm files beside it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { channelEnvNames } from '../../src/config/env.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { startCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-store-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const command of ['start', 'demo']) {
  test(`the store ${command} makes: the file 0600, its directory 0700, its write-ahead log as the file`, async () => {
    const data = join(dir, command, 'data');
    const noChannels = Object.fromEntries(channelEnvNames(PROJECT_ROOT).map((n) => [n, '']));
    // The usual umask, whatever the test runner's: the file came out 0644 and the directory 0755 with it.
    const umask = process.umask(0o022);
    const gw = startCli([command], { ...noChannels, PORT: '0', HOST: '127.0.0.1', GATEWAY_WATCH: '0', GATEWAY_DB: join(data, 'gateway.db') });
    process.umask(umask);
    try {
      await gw.waitFor(command === 'start' ? /"msg":"gateway listening"/ : /demo listening on/);
      assert.equal(statSync(data).mode & 0o777, 0o700, 'the directory');
      const files = readdirSync(data).filter((f) => f.startsWith('gateway.db'));
      assert.ok(files.includes('gateway.db'), files.join(', '));
      for (const f of files) assert.equal(statSync(join(data, f)).mode & 0o777, 0o600, f);
    } finally {
      assert.equal(await gw.stop(), 0);
    }
  });
}

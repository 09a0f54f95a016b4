import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openSqliteStore } from '../src/store/sqlite.js';
import { storeContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeContract('sqlite (memory)', async () => openSqliteStore(':memory:'));
storeContract('sqlite (file)', async () => openSqliteStore(join(dir, `s${n++}.db`)));

test('sqlite store: a file store keeps tokens across reopen', async () => {
  const path = join(dir, 'reopen.db');
  const a = openSqliteStore(path);
  const t = await a.createToken({ name: 'x', keyHash: 'hx', group: 'default', models: null, quota: 3 });
  await a.debit(t.id, 2);
  await a.close();
  const b = openSqliteStore(path);
  try {
    assert.equal((await b.findTokenByHash('hx'))?.used, 2);
  } finally {
    await b.close();
  }
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'libsql';
import { openStore } from '../src/store/open-store.js';
import { storeContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeContract('sqlite (memory)', async () => openStore(':memory:'));
storeContract('sqlite (file)', async () => openStore(join(dir, `s${n++}.db`)));

test('sqlite store: a file store keeps tokens across reopen', async () => {
  const path = join(dir, 'reopen.db');
  const a = await openStore(path);
  const t = await a.createToken({ name: 'x', keyHash: 'hx', group: 'default', models: null, quota: 3 });
  await a.debit(t.id, 2, { ref: 'r', model: 'm' });
  await a.close();
  const b = await openStore(path);
  try {
    assert.equal((await b.findTokenByHash('hx'))?.used, 2);
  } finally {
    await b.close();
  }
});

test('sqlite store: a store from before the ledger opens with one debit row per token for what it had used', async () => {
  const path = join(dir, 'before-ledger.db');
  const a = await openStore(path);
  const t = await a.createToken({ name: 'old', keyHash: 'old', group: 'default', models: null, quota: 10 });
  const idle = await a.createToken({ name: 'idle', keyHash: 'idle', group: 'default', models: null, quota: 10 });
  await a.debit(t.id, 3, { ref: 'r', model: 'm' });
  await a.createTask({ id: 'task_old', tokenId: t.id, kind: 'video', route: 'r', model: 'm', upstreamModel: 'm', channel: 'c', price: 2, createdAt: 1, deadlineAt: 2 });
  await a.updateTask('task_old', 1, { status: 'completed' });
  await a.close();
  // Back to schema version 2: no ledger, no settlement columns, no holds, no resources, no leases, no
  // task order, no links, the units already used.
  const db = new Database(path);
  db.exec(`DROP TABLE links; DROP TABLE resources; DROP TABLE holds; DROP TABLE ledger; ALTER TABLE tasks DROP COLUMN pricing; ALTER TABLE tasks DROP COLUMN charged; ALTER TABLE tasks DROP COLUMN lease_owner; ALTER TABLE tasks DROP COLUMN lease_until; DROP INDEX tasks_by_seq; DROP INDEX tasks_by_token; ALTER TABLE tasks DROP COLUMN seq; DELETE FROM schema_version WHERE version >= 3;`);
  db.close();
  const b = await openStore(path);
  try {
    assert.equal((await b.getToken(t.id))?.used, 5);
    assert.deepEqual((await b.ledger(t.id, null, 10)).map((r) => [r.kind, r.ref, r.amount]), [['debit', 'opening-balance', 5]]);
    assert.deepEqual(await b.ledger(idle.id, null, 10), [], 'nothing used, no row');
    assert.equal((await b.getTask('task_old'))?.charged, 2, 'a finished task counts as settled at its price');
    assert.deepEqual((await b.listTasks(t.id, ['video'], { after: null, limit: 10, order: 'desc' }))?.map((x) => x.id), ['task_old'], 'an older task is listed');
    await b.refund(t.id, 1, { ref: 'r', model: 'm' });
    assert.deepEqual(await b.ledgerBalance(t.id), { used: 4, debit: 5, refund: 1, settle: 0 });
  } finally {
    await b.close();
  }
});

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'libsql';
import { openStore } from '../../src/store/open-store.js';
import { BACKSTOP_PAGES, startCheckpointer } from '../../src/store/sqlite/checkpointer.js';
import { groupCommit } from '../../src/store/sqlite/group-commit.js';
import { archiveContract } from './archive-contract.js';
import { budgetContract } from './budget-contract.js';
import { storeContract } from './store-contract.js';
import { until } from '../helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeContract('sqlite (memory)', async () => openStore(':memory:'));
archiveContract('sqlite (file)', async () => openStore(join(dir, `a${n++}.db`)));
storeContract('sqlite (file)', async () => openStore(join(dir, `s${n++}.db`)));
budgetContract('sqlite (memory)', async (clock) => openStore(':memory:', { clock }));
budgetContract('sqlite (file)', async (clock) => openStore(join(dir, `b${n++}.db`), { clock }));

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
  await a.createTask({
    id: 'task_old',
    tokenId: t.id,
    kind: 'video',
    route: 'r',
    model: 'm',
    upstreamModel: 'm',
    channel: 'c',
    price: 2,
    createdAt: 1,
    deadlineAt: 2,
  });
  await a.updateTask('task_old', 1, { status: 'completed' });
  await a.close();
  // Back to schema version 2: no ledger, no settlement columns, no holds, no resources, no leases, no
  // task order, no links, no states seen, no rate limits, no expiry, no unique names, rotation, last use
  // or allow-lists, no webhooks; the units already used.
  const db = new Database(path);
  db.exec(
    `DROP TRIGGER archive_task_completed; DROP TRIGGER archive_task_deleted; DROP TABLE archive_on; DROP TABLE archive_jobs; DROP TABLE archive_files; DROP TABLE token_archive; DROP TABLE webhook_deliveries; DROP TABLE webhook_callbacks; DROP TABLE webhook_endpoints; DROP TABLE requests; DROP TABLE audit; DROP TABLE links; DROP TABLE resources; DROP TABLE holds; DROP TABLE ledger; ALTER TABLE tasks DROP COLUMN pricing; ALTER TABLE tasks DROP COLUMN charged; ALTER TABLE tasks DROP COLUMN lease_owner; ALTER TABLE tasks DROP COLUMN lease_until; DROP INDEX tasks_by_seq; DROP INDEX tasks_by_token; ALTER TABLE tasks DROP COLUMN seq; DROP INDEX tasks_by_created; DROP INDEX tasks_by_status; ALTER TABLE tasks DROP COLUMN history; ALTER TABLE tokens DROP COLUMN rpm_limit; ALTER TABLE tokens DROP COLUMN max_parallel; ALTER TABLE tokens DROP COLUMN expires_at; ALTER TABLE tokens DROP COLUMN budget; ALTER TABLE tokens DROP COLUMN budget_period; ALTER TABLE tokens DROP COLUMN budget_days; ALTER TABLE tokens DROP COLUMN budget_anchor; ALTER TABLE tokens DROP COLUMN budget_start; ALTER TABLE tokens DROP COLUMN budget_used; DROP INDEX tokens_by_name; DROP INDEX tokens_by_previous_key; ALTER TABLE tokens DROP COLUMN previous_key_hash; ALTER TABLE tokens DROP COLUMN previous_key_expires_at; ALTER TABLE tokens DROP COLUMN last_used_at; ALTER TABLE tokens DROP COLUMN allowed_ips; DELETE FROM schema_version WHERE version >= 3;`,
  );
  db.close();
  const b = await openStore(path);
  try {
    assert.equal((await b.getToken(t.id))?.used, 5);
    assert.deepEqual(
      (await b.ledger(t.id, null, 10)).map((r) => [r.kind, r.ref, r.amount]),
      [['debit', 'opening-balance', 5]],
    );
    assert.deepEqual(await b.ledger(idle.id, null, 10), [], 'nothing used, no row');
    assert.equal((await b.getTask('task_old'))?.charged, 2, 'a finished task counts as settled at its price');
    assert.deepEqual(
      (await b.listTasks(t.id, ['video'], { after: null, limit: 10, order: 'desc' }))?.map((x) => x.id),
      ['task_old'],
      'an older task is listed',
    );
    await b.refund(t.id, 1, { ref: 'r', model: 'm' });
    assert.deepEqual(await b.ledgerBalance(t.id), { used: 4, debit: 5, refund: 1, settle: 0 });
    assert.deepEqual((await b.taskHistory('task_old'))?.states, [], 'a task from before states were kept has none');
    assert.deepEqual(
      (await b.findTasks({ before: null, limit: 10, status: 'completed' })).map((x) => x.id),
      ['task_old'],
      'and is found',
    );
  } finally {
    await b.close();
  }
});

/** The token's `used` as the database file alone holds it: what a checkpoint has copied out of the WAL. */
function usedInFileAlone(path: string, tokenId: string): number | null {
  const copy = `${path}.alone`;
  copyFileSync(path, copy);
  const db = new Database(copy);
  try {
    return (db.prepare('SELECT used FROM tokens WHERE id = ?').get(tokenId) as { used: number } | undefined)?.used ?? null;
  } catch {
    return null; // not even the tables copied yet
  } finally {
    db.close();
    rmSync(copy, { force: true });
  }
}

test('sqlite store: the WAL is checkpointed by the worker thread, not inside a commit on the event loop', async () => {
  const path = join(dir, 'checkpoint.db');
  const store = await openStore(path);
  try {
    const t = await store.createToken({ name: 'c', keyHash: 'hc', group: 'default', models: null, quota: null });
    // 300 commits: far below the writer's own backstop (BACKSTOP_PAGES), so only the worker can have copied them.
    for (let i = 0; i < 300; i++) await store.debit(t.id, 1, { ref: `r${i}`, model: 'm' });
    assert.ok(BACKSTOP_PAGES >= 10_000);
    await until('the database file itself to hold every commit', () => usedInFileAlone(path, t.id) === 300);
  } finally {
    await store.close();
  }
});

test('sqlite store: the checkpointer thread starts with the first commit that changed a row, not with one that changed nothing', {
  skip: process.platform !== 'linux' && 'threads are counted in /proc',
}, async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const store = await openStore(join(dir, 'idle.db'));
  try {
    const before = threads();
    // What an idle gateway commits every second: claims and sweeps that find nothing.
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await store.expireHolds(Date.now(), 10), []);
      assert.deepEqual(await store.endHolds([{ ref: 'none', outcome: 'refund', tokenId: 't', model: 'm', amount: 1 }]), ['gone']);
    }
    assert.equal(threads(), before, 'no thread for commits that changed nothing');
    const t = await store.createToken({ name: 'c', keyHash: 'idle', group: 'default', models: null, quota: null });
    assert.equal(await store.debit(t.id, 1, { ref: 'r', model: 'm' }), true);
    await until('the checkpointer thread', () => threads() > before);
  } finally {
    await store.close();
  }
});

test('sqlite store: the checkpointer copies a WAL another connection wrote, and stops when closed', async () => {
  const path = join(dir, 'checkpointer.db');
  const db = new Database(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x TEXT)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  for (let i = 0; i < 500; i++) insert.run(`row ${i}`);
  const cp = startCheckpointer(path, 60_000);
  try {
    const round = await new Promise<{ log: number; checkpointed: number }>((resolve) => {
      cp.onRound(resolve);
      cp.now();
    });
    assert.ok(round.log >= 500, `the WAL held every commit (${round.log} frames)`);
    assert.equal(round.checkpointed, round.log, 'all of it copied');
  } finally {
    await cp.close();
    db.close();
  }
  const copy = new Database(`${path}`, { readonly: true });
  try {
    assert.equal((copy.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 500);
  } finally {
    copy.close();
  }
});

test('group commit: a step run at once answers before the commit and is durable after the turn; one that fails fails its turn whole', async () => {
  const path = join(dir, 'now.db');
  const db = new Database(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('CREATE TABLE t (x TEXT UNIQUE)');
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  const commits = groupCommit(db);
  const other = new Database(path);
  const rows = () => (other.prepare('SELECT x FROM t ORDER BY x').all() as { x: string }[]).map((r) => r.x);
  try {
    assert.equal(
      commits.now(() => insert.run('a').changes),
      1,
      'answered at once',
    );
    assert.deepEqual(rows(), [], 'not yet committed: another connection sees nothing');
    await commits.write(() => insert.run('b'));
    assert.deepEqual(rows(), ['a', 'b'], "the turn's commit holds the step run at once");
    // A step that fails part way (its second insert is a duplicate) fails its turn: the step before it and the turn's writes too.
    commits.now(() => insert.run('c'));
    assert.throws(() => commits.now(() => (insert.run('d'), insert.run('a'))), /UNIQUE/);
    await assert.rejects(
      commits.write(() => insert.run('e')),
      /UNIQUE/,
    );
    assert.deepEqual(rows(), ['a', 'b'], 'nothing of the failed turn');
    // The next turn is a new transaction.
    commits.now(() => insert.run('f'));
    await commits.write(() => insert.run('g'));
    assert.deepEqual(rows(), ['a', 'b', 'f', 'g']);
  } finally {
    other.close();
    db.close();
  }
});

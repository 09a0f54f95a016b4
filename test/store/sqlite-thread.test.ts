/**
 * The embedded store on its own thread (src/store/sqlite/store-thread.ts), as `gateway start` opens
 * it: the whole store contract through it, and what only a thread can get wrong (errors and Buffers
 * crossing, the caller's clock, a thread that dies, a close with calls under way).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { GatewayError } from '../../src/errors/gateway-error.js';
import { openStore } from '../../src/store/open-store.js';
import { TokenNameTaken } from '../../src/store/store.js';
import { archiveContract } from './archive-contract.js';
import { budgetContract } from './budget-contract.js';
import { storeContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-thread-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const lastFile = () => join(dir, `t${n - 1}.db`);
const file = () => join(dir, `t${n++}.db`);

storeContract('sqlite (file, own thread)', async () => openStore(file(), { thread: true }));
archiveContract('sqlite (file, own thread)', async () => openStore(file(), { thread: true }));
budgetContract('sqlite (file, own thread)', async (clock) => openStore(file(), { clock, thread: true }));

test('own thread: errors cross as the classes callers check (a taken name is TokenNameTaken), a Buffer as a Buffer', async () => {
  const store = await openStore(file(), { thread: true });
  try {
    const t = await store.createToken({ name: 'taken', keyHash: 'h1', group: 'default', models: null, quota: 1 });
    await assert.rejects(store.createToken({ name: 'taken', keyHash: 'h2', group: 'default', models: null, quota: 1 }), (err) => {
      assert.ok(err instanceof TokenNameTaken, `${err}`);
      assert.equal(err.tokenName, 'taken');
      return true;
    });
    const data = Buffer.from('a stored file');
    await store.putLinks([{ id: 'l1', tokenId: t.id, channel: 'c', url: null, data, contentType: 'image/png', createdAt: 1, expiresAt: Date.now() + 60_000 }]);
    const link = await store.getLink('l1', Date.now());
    assert.ok(Buffer.isBuffer(link?.data), 'a Buffer again, not a bare Uint8Array');
    assert.equal(link.data.toString(), 'a stored file');
  } finally {
    await store.close();
  }
});

test("own thread: the ledger is stamped with the caller's clock, read at the call", async () => {
  let now = Date.UTC(2026, 0, 10, 12);
  const store = await openStore(file(), { thread: true, clock: () => now });
  try {
    const t = await store.createToken({ name: 'clock', keyHash: 'hc', group: 'default', models: null, quota: 5 });
    await store.debit(t.id, 1, { ref: 'r1', model: 'm' });
    now += 3_600_000;
    await store.debit(t.id, 1, { ref: 'r2', model: 'm' });
    assert.deepEqual(
      (await store.ledger(t.id, null, 10)).map((r) => r.at),
      [Date.UTC(2026, 0, 10, 12), Date.UTC(2026, 0, 10, 13)],
    );
  } finally {
    await store.close();
  }
});

test('own thread: ledger rows are heard once committed; calls made before close() are answered, a call after it fails store_unavailable', async () => {
  const store = await openStore(file(), { thread: true });
  const heard: string[] = [];
  store.onLedger((e) => heard.push(`${e.kind} ${e.ref}`));
  const t = await store.createToken({ name: 'close', keyHash: 'hx', group: 'default', models: null, quota: 5 });
  const writes = [store.debit(t.id, 1, { ref: 'a', model: 'm' }), store.debit(t.id, 1, { ref: 'b', model: 'm' })];
  const closed = store.close();
  assert.deepEqual(await Promise.all(writes), [true, true], 'both debits made before close() are written');
  await closed;
  assert.deepEqual(heard.sort(), ['debit a', 'debit b']);
  await assert.rejects(store.getToken(t.id), (err) => err instanceof GatewayError && err.code === 'store_unavailable');
  assert.equal(store.availability.up, false);
  const reopened = await openStore(lastFile(), { thread: true });
  try {
    assert.equal((await reopened.getToken(t.id))?.used, 2, 'and committed');
  } finally {
    await reopened.close();
  }
});

test('own thread: an idle store does not keep a process alive, and one awaited call does', () => {
  const script = `
    import { openStore } from ${JSON.stringify(new URL('../../src/store/open-store.js', import.meta.url).href)};
    const store = await openStore(${JSON.stringify(file())}, { thread: true });
    const t = await store.createToken({ name: 'alive', keyHash: 'ha', group: 'default', models: null, quota: 1 });
    console.log((await store.getToken(t.id)).name);
  `;
  const path = join(dir, 'alive.mjs');
  writeFileSync(path, script);
  const r = spawnSync(process.execPath, [path], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'alive', 'the last call was answered before the process ended, and it ended without close()');
});

test('own thread: a file the thread cannot open fails openStore with the reason, and leaves no thread behind', async () => {
  // A directory is not a database file.
  await assert.rejects(openStore(dir, { thread: true }), (err) => err instanceof Error && err.message.length > 0);
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import { clampSettlement } from '../../src/store/money.js';

test('openStore: a path and a file: URL open the same embedded store; :memory: is empty; postgres:// is PostgreSQL; another scheme is refused by name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'open-store-'));
  try {
    const path = join(dir, 'nested', 'g.db');
    const a = await openStore(path);
    await a.createToken({ name: 'one', keyHash: 'h1', group: 'default', models: null, quota: null });
    await a.close();
    const b = await openStore(pathToFileURL(path).href);
    assert.deepEqual(
      (await b.listTokens()).map((t) => t.name),
      ['one'],
    );
    await b.close();
    assert.deepEqual(await (await openStore(':memory:')).listTokens(), []);
    await assert.rejects(openStore('mysql://127.0.0.1/test'), /"mysql:" is not supported/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('clampSettlement: whole units from 0 to the hold, rounded up; a figure that is not finite keeps the hold', () => {
  assert.equal(clampSettlement(3.2, 10), 4);
  assert.equal(clampSettlement(-5, 10), 0);
  assert.equal(clampSettlement(50, 10), 10);
  assert.equal(clampSettlement(Number.NaN, 10), 10);
  assert.equal(clampSettlement(Number.POSITIVE_INFINITY, 10), 10);
});

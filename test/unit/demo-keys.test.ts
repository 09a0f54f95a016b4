/**
 * The demo's keys (src/cli/demo-keys.ts): derived from a secret file beside a SQLite store, the same
 * on every call; new at every start for a store that is not a file; the file made private again
 * when its mode let others read it; a file that is not a secret refused, naming it.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { demoKeys } from '../../src/cli/demo-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-demo-keys-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a file store: the keys come from <db>.demo-secret (made 0600 on first use), the same whichever form names the file', () => {
  const db = join(dir, 'sub', 'a.db');
  const first = demoKeys(db);
  assert.equal(first.secretFile, `${db}.demo-secret`);
  assert.equal(statSync(`${db}.demo-secret`).mode & 0o777, 0o600);
  assert.deepEqual(demoKeys(db), first);
  assert.deepEqual(demoKeys(pathToFileURL(db).href), first);
  assert.notEqual(first.apiKey, first.adminKey);
  // Another store in the same directory has keys of its own.
  assert.notEqual(demoKeys(join(dir, 'sub', 'b.db')).apiKey, first.apiKey);
});

test('a store that is not a file: new keys at every start, from no file', () => {
  for (const url of [':memory:', 'postgres://gw:pw@127.0.0.1:5432/gw']) {
    const a = demoKeys(url);
    assert.equal(a.secretFile, null);
    assert.notEqual(demoKeys(url).apiKey, a.apiKey);
  }
});

test('a secret readable by others is made private again; a file that is no secret is refused, naming it', () => {
  const db = join(dir, 'c.db');
  const keys = demoKeys(db);
  chmodSync(`${db}.demo-secret`, 0o644);
  assert.deepEqual(demoKeys(db), keys);
  assert.equal(statSync(`${db}.demo-secret`).mode & 0o777, 0o600);
  assert.ok(readFileSync(`${db}.demo-secret`, 'utf8').trim().length >= 43);

  writeFileSync(join(dir, 'd.db.demo-secret'), 'not a secret\n', { mode: 0o600 });
  assert.throws(() => demoKeys(join(dir, 'd.db')), { name: 'CliExit', status: 2, message: /d\.db\.demo-secret is not a demo secret/ });
});

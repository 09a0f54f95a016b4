/**
 * The migration that makes token names unique (src/store/*\/migrations.ts): a store whose tokens
 * share names opens with the oldest of each name keeping it and the others suffixed `-2`, `-3`, …
 * by created_at (then id), a suffixed name another token already has getting the id's first 8
 * characters too. Run on both drivers, from the schema just before that step.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'libsql';
import pg from 'pg';
import { openStore } from '../../src/store/open-store.js';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { TokenNameTaken, type Store } from '../../src/store/store.js';
import { pgSchemas, serviceUrl } from '../helpers/services.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-names-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The index of the step that makes names unique: the schema before it is where old stores stand. */
const stepOf = (migrations: readonly string[]) => {
  const i = migrations.findIndex((m) => m.includes('tokens_by_previous_key'));
  assert.ok(i > 0, 'the step is there');
  return i;
};

const id = (c: string) => `${c.repeat(8)}-0000-4000-8000-000000000000`;
/** [id, name, created_at]: three `ci` (the oldest keeps it), a `ci-2` there before, one alone. */
const ROWS: [string, string, number][] = [
  [id('b'), 'ci', 100],
  [id('z'), 'ci', 50],
  [id('a'), 'ci', 100],
  [id('c'), 'ci-2', 10],
  [id('d'), 'solo', 20],
];
const EXPECTED = new Map([
  [id('z'), 'ci'],
  [id('a'), 'ci-2-aaaaaaaa'],
  [id('b'), 'ci-3'],
  [id('c'), 'ci-2'],
  [id('d'), 'solo'],
]);

async function expectRenamed(store: Store): Promise<void> {
  try {
    const names = new Map((await store.listTokens()).map((t) => [t.id, t.name]));
    assert.deepEqual(names, EXPECTED);
    await assert.rejects(store.createToken({ name: 'ci', keyHash: 'new', group: 'default', models: null, quota: null }), TokenNameTaken, 'unique from now on');
  } finally {
    await store.close();
  }
}

test('sqlite store: tokens sharing a name are renamed deterministically when names become unique', async () => {
  const path = join(dir, 'dups.db');
  const db = new Database(path);
  const step = stepOf(SQLITE_MIGRATIONS);
  db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
  for (const [v, m] of SQLITE_MIGRATIONS.slice(0, step).entries()) {
    db.exec(m);
    db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(v + 1);
  }
  const insert = db.prepare("INSERT INTO tokens (id, name, key_hash, grp, created_at) VALUES (?, ?, ?, 'default', ?)");
  for (const [tid, name, at] of ROWS) insert.run(tid, name, `hash-${tid}`, at);
  db.close();
  await expectRenamed(await openStore(path));
});

const databaseUrl = serviceUrl('DATABASE_URL', 'postgres store: tokens sharing a name are renamed when names become unique');
if (databaseUrl) {
  const schemas = pgSchemas(databaseUrl);
  test('postgres store: tokens sharing a name are renamed deterministically when names become unique', async () => {
    const url = schemas.url();
    const schema = new URL(url).searchParams.get('schema') ?? '';
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`SET search_path TO "${schema}"`);
      await client.query('CREATE TABLE schema_version (version INTEGER NOT NULL)');
      const step = stepOf(PG_MIGRATIONS);
      for (const [v, m] of PG_MIGRATIONS.slice(0, step).entries()) {
        await client.query(m);
        await client.query('INSERT INTO schema_version (version) VALUES ($1)', [v + 1]);
      }
      for (const [tid, name, at] of ROWS) {
        await client.query("INSERT INTO tokens (id, name, key_hash, grp, created_at) VALUES ($1, $2, $3, 'default', $4)", [tid, name, `hash-${tid}`, at]);
      }
    } finally {
      await client.end();
    }
    await expectRenamed(await openStore(url));
  });
}

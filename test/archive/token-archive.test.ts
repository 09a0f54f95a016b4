/**
 * A token's retention in the result archive (docs/archive.md, "Retention"): set and read through
 * the admin routes (by id or name, bounds checked, audited) and through `gateway tokens
 * set-archive-days` on a file store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import { readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';
import { runCli } from '../helpers/process.js';

const ADMIN_KEY = 'archive-days-admin-key';

describe('token retention in the archive', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ adminKey: ADMIN_KEY });
  });
  after(() => h.close());
  const admin = async (method: string, path: string, body?: unknown): Promise<JsonAnswer> =>
    readAnswer(
      await fetch(h.url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );

  test('POST and GET /admin/tokens/{token_id}/archive set and read it, by id or name; bounds are checked; the change is audited', async () => {
    const created = await admin('POST', '/admin/tokens', { group: 'default', name: 'keeper' });
    assert.equal(created.status, 201, created.text);
    const id = (created.json.token as { id: string }).id;
    assert.deepEqual((await admin('GET', `/admin/tokens/${id}/archive`)).json, { token_id: id, archive_keep_days: null });
    const set = await admin('POST', '/admin/tokens/keeper/archive', { archive_keep_days: 30 });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json, { token_id: id, archive_keep_days: 30 });
    assert.deepEqual((await admin('GET', `/admin/tokens/${id}/archive`)).json, { token_id: id, archive_keep_days: 30 });
    for (const bad of [-1, 3651, 1.5, '7']) {
      const r = await admin('POST', `/admin/tokens/${id}/archive`, { archive_keep_days: bad });
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
    }
    assert.equal((await admin('POST', '/admin/tokens/nobody/archive', { archive_keep_days: 1 })).status, 404);
    await admin('POST', `/admin/tokens/${id}/archive`, { archive_keep_days: null });
    assert.deepEqual((await admin('GET', `/admin/tokens/${id}/archive`)).json, { token_id: id, archive_keep_days: null });
    const audit = (await admin('GET', `/admin/audit?target=${id}&action=token.archive_days`)).json.audit as { before: unknown; after: unknown }[];
    assert.deepEqual(
      audit.map((a) => [a.before, a.after]),
      [
        [{ archive_keep_days: 30 }, { archive_keep_days: null }],
        [{ archive_keep_days: null }, { archive_keep_days: 30 }],
      ],
    );
  });
});

test('gateway tokens set-archive-days sets and clears it; a bad number is a usage error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-archive-cli-'));
  try {
    const env = { GATEWAY_DB: join(dir, 'g.db') };
    const made = runCli(['tokens', 'create', '--group', 'default', '--name', 'cli-keeper'], env);
    assert.equal(made.status, 0, made.stderr);
    const set = runCli(['tokens', 'set-archive-days', 'cli-keeper', '0'], env);
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stdout, /kept 0 day\(s\)/);
    const store = await openStore(env.GATEWAY_DB);
    const id = (await store.listTokens()).find((t) => t.name === 'cli-keeper')!.id;
    assert.equal(await store.getTokenArchiveDays(id), 0);
    await store.close();
    assert.equal(runCli(['tokens', 'set-archive-days', 'cli-keeper', 'default'], env).status, 0);
    const again = await openStore(env.GATEWAY_DB);
    assert.equal(await again.getTokenArchiveDays(id), null);
    await again.close();
    const bad = runCli(['tokens', 'set-archive-days', 'cli-keeper', '-3'], env);
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /set-archive-days/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

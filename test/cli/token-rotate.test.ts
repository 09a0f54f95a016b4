/**
 * `gateway tokens rotate` (docs/tokens-and-quota.md, "Names and rotation") as operators run it: real
 * processes on a store file, with a gateway in this process on the same file (no cached lookups; a
 * clock the test moves) to show what a rotated key can do during its grace and after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { createGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-token-rotate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens rotate NAME --grace 24h: the new key is printed once; the old one works for the grace and not after; rotate without --grace ends it at once', async () => {
  const db = join(dir, 'rotate.db');
  const env = { GATEWAY_DB: db };
  const created = runCli(['tokens', 'create', '--group', 'default', '--name', 'rot'], env);
  assert.equal(created.status, 0, created.stderr);
  const first = created.stdout.trim();
  const store = await openStore(db);
  const snapshot = loadConfigOrThrow(PROJECT_ROOT, { env: {} });
  let offset = 0;
  const gw = createGateway({
    snapshot: () => snapshot,
    store,
    log: silentLogger(),
    poll: false,
    // No cached lookups: without Redis a CLI change reaches a gateway when its cached lookup runs out.
    authCacheTtlMs: 0,
    clock: () => new Date(Date.now() + offset),
  });
  await gw.listen(0);
  const status = async (key: string) => (await fetch(`${gw.url()}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status;
  try {
    assert.equal(await status(first), 200);
    const rotated = runCli(['tokens', 'rotate', 'rot', '--grace', '24h'], env);
    assert.equal(rotated.status, 0, rotated.stderr);
    const second = rotated.stdout.trim();
    assert.match(second, /^gw-[A-Za-z0-9_-]{43}$/);
    assert.match(rotated.stderr, /rotated the key of token .* \(rot\); the old key works until \d{4}-\d\d-\d\dT.*Z; the new key is shown once/);
    assert.deepEqual([await status(first), await status(second)], [200, 200], 'both during the grace');
    offset = 24 * 3_600_000 + 60_000;
    assert.deepEqual([await status(first), await status(second)], [401, 200], 'the old key after the grace');
    offset = 0;
    const again = runCli(['tokens', 'rotate', 'rot'], env);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /the old key stopped working now/);
    assert.deepEqual([await status(first), await status(second), await status(again.stdout.trim())], [401, 401, 200], 'grace 0: at once');
    const listed = runCli(['tokens', 'list'], env);
    assert.match(listed.stdout, /rot .*previous_key_until=/);
    await gw.lastUsed.flush(false);
    assert.match(runCli(['tokens', 'list'], env).stdout, /rot .*last_used=\d{4}-\d\d-\d\dT[\d:.]+Z/, 'list shows the last use');
    const audit = await store.findAudit({ action: 'token.rotate', limit: 10, before: null });
    assert.equal(audit.length, 2);
    const text = JSON.stringify(audit);
    assert.ok(![first, second].some((k) => text.includes(k.slice(3))), 'no key in the audit log');
  } finally {
    await gw.close();
    await store.close();
  }
});

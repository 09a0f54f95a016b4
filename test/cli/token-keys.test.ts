/**
 * `gateway tokens` with names, rotation and allow-lists (docs/operating.md; docs/tokens-and-quota.md,
 * "Names and rotation", "IP allow-list") as operators run them: real processes on a store file,
 * with a gateway in this process on the same file (no cached lookups; a clock the test moves) to
 * show what a rotated key can do during its grace and after it.
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
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { runCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-token-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens: every command takes a name or an id; names are unique; rename, set-ips and create --allow-ip; bad input is exit 2', async () => {
  const env = { GATEWAY_DB: join(dir, 'names.db') };
  const ok = (args: string[]) => {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  const created = ok(['create', '--group', 'default', '--name', 'ops key', '--allow-ip', '10.0.0.0/8', '--allow-ip', '2001:db8::/32']);
  const taken = runCli(['tokens', 'create', '--group', 'default', '--name', 'ops key'], env);
  assert.deepEqual([taken.status, taken.stderr], [1, 'gateway: a token named "ops key" already exists; token names are unique\n']);
  for (const [args, why] of [
    [['create', '--group', 'default', '--name', ' ops'], /--name: a token name may not start or end with white space/],
    [['create', '--group', 'default', '--name', '0b7e5c1a-1111-4222-8333-444455556666'], /shaped like a token id/],
    [['create', '--group', 'default', '--allow-ip', '10.0.0.0/8', '--allow-ip', '10.0.0.0/40'], /--allow-ip: "10\.0\.0\.0\/40" is not an IPv4 or IPv6/],
    [['rename', 'ops key', 'x'.repeat(101)], /1 to 100 characters/],
    [['set-ips', 'ops key'], /missing <CIDR…\|any>/],
    [['set-ips', 'ops key', '10.0.0.1', 'nonsense'], /"nonsense" is not/],
    [['rotate', 'ops key', '--grace', '31d'], /--grace takes a duration \(30s, 15m, 24h, 7d; at most 30d\) or 0, not '31d'/],
  ] as [string[], RegExp][]) {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, why);
  }
  const list = () => JSON.parse(ok(['list', '--json']).stdout) as TokenView[];
  const [token] = list();
  assert.ok(token);
  assert.deepEqual([token.name, token.allowed_ips, list().length], ['ops key', ['10.0.0.0/8', '2001:db8::/32'], 1], 'nothing else was made');
  assert.match(created.stderr, new RegExp(`created token ${token.id} \\(ops key,`));
  // Every command, by name (and some by id): each prints the token it changed.
  for (const args of [
    ['disable', 'ops key'],
    ['enable', token.id],
    ['set-quota', 'ops key', '5'],
    ['set-limits', 'ops key', '--rpm', '10'],
    ['set-expiry', 'ops key', 'never'],
    ['set-ips', 'ops key', '127.0.0.1', '::1'],
  ]) {
    assert.match(ok(args).stdout, new RegExp(`^${token.id} {2}ops key `), args.join(' '));
  }
  assert.match(ok(['list']).stdout, /quota=5 .*rpm=10 .*allowed_ips=127\.0\.0\.1,::1/);
  assert.equal(list()[0]?.allowed_ips?.length, 2);
  assert.match(ok(['set-ips', 'ops key', 'any']).stdout, /^(?!.*allowed_ips)/);
  assert.equal(list()[0]?.allowed_ips, null);
  ok(['create', '--group', 'default', '--name', 'other']);
  const clash = runCli(['tokens', 'rename', 'ops key', 'other'], env);
  assert.deepEqual([clash.status, clash.stderr], [1, 'gateway: a token named "other" already exists; token names are unique\n']);
  assert.match(ok(['rename', 'ops key', 'ops-2']).stdout, new RegExp(`^${token.id} {2}ops-2 `));
  const gone = runCli(['tokens', 'disable', 'ops key'], env);
  assert.deepEqual([gone.status, gone.stderr], [1, 'gateway: no token named "ops key"\n']);
  assert.match(ok(['delete', 'ops-2']).stdout, new RegExp(`^deleted ${token.id} `));
  const store = await openStore(env.GATEWAY_DB);
  try {
    const actions = (await store.findAudit({ limit: 50, before: null })).map((a) => [a.action, a.actor]);
    for (const action of ['token.rename', 'token.allowed_ips'])
      assert.ok(
        actions.some(([a, by]) => a === action && by === 'cli'),
        action,
      );
  } finally {
    await store.close();
  }
});

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

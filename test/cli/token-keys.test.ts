/**
 * `gateway tokens` with names and allow-lists (docs/operating.md; docs/tokens-and-quota.md, "Names
 * and rotation", "IP allow-list") as operators run them: real processes on a store file. Apart from
 * test/cli/token-rotate.test.ts and token-key-input.test.ts, so that each file stays well inside
 * the runner's two minutes on a loaded machine.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { openStore } from '../../src/store/open-store.js';
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { runCli } from '../helpers/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-cli-token-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens: every command takes a name or an id; names are unique; rename, set-ips and create --allow-ip', async () => {
  const env = { GATEWAY_DB: join(dir, 'names.db') };
  const ok = (args: string[]) => {
    const r = runCli(['tokens', ...args], env);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  const created = ok(['create', '--group', 'default', '--name', 'ops key', '--allow-ip', '10.0.0.0/8', '--allow-ip', '2001:db8::/32']);
  const taken = runCli(['tokens', 'create', '--group', 'default', '--name', 'ops key'], env);
  assert.deepEqual([taken.status, taken.stderr], [1, 'gateway: a token named "ops key" already exists; token names are unique\n']);
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

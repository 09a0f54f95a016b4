/**
 * Token groups as operators see them (docs/admin-and-metrics.md, `GET /admin/groups`; docs/operating.md,
 * `gateway groups`): each group of channels.yaml with the rate limits its keys share, its
 * max_concurrency, its channels and its tokens (all, and active), and a group only tokens still
 * name shown as undeclared. The same answer from the admin route and from the CLI over one store.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { openStore } from '../../src/store/open-store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { runCli } from '../helpers/process.js';

const ADMIN_KEY = 'groups-test-admin-key-0123456789';
const GROUP_LINE = '    description: Every token created without --group.\n';

/** A copy of the project's config whose `default` group shares limits, plus a group `resellers` without limits or channels. */
function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-groups-'));
  for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
  const text = readFileSync(join(PROJECT_ROOT, 'channels.yaml'), 'utf8');
  assert.ok(text.includes(GROUP_LINE), 'the project config names the default group as this test expects');
  writeFileSync(
    join(dir, 'channels.yaml'),
    text.replace(
      GROUP_LINE,
      `${GROUP_LINE}    max_concurrency: 40\n    limits: { rpm: 120, max_parallel: 6 }\n  resellers:\n    limits: { max_parallel: 2 }\n`,
    ),
  );
  return dir;
}

describe('token groups with their limits', () => {
  let h: Harness;
  let dir: string;
  before(async () => {
    dir = configDir();
    h = await startHarness({ configDir: dir, adminKey: ADMIN_KEY });
    // The harness's own token is the first of `default`; one more active, one disabled, one expired.
    await h.createKey();
    const disabled = await h.store.createToken({ name: 'off', keyHash: hashKey(generateKey()), group: 'default', models: null, quota: null });
    await h.store.setTokenDisabled(disabled.id, true);
    await h.createKey({ expiresAt: Date.now() - 1_000 });
    await h.createKey({ group: 'legacy' });
  });
  after(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const groups = async () => {
    const res = await fetch(`${h.url}/admin/groups`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { groups: Record<string, unknown>[] }).groups;
  };

  test('GET /admin/groups: each group with its shared limits, max_concurrency, channels and token counts; an undeclared one last', async () => {
    const all = await groups();
    assert.deepEqual(
      all.map((g) => g.name),
      ['default', 'resellers', 'legacy'],
    );
    const [def, resellers, legacy] = all as [Record<string, unknown>, Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual(def.limits, { rpm: 120, max_parallel: 6 });
    assert.equal(def.max_concurrency, 40);
    assert.equal(def.declared, true);
    assert.deepEqual(def.tokens, { total: 4, active: 2 }, 'a disabled and an expired token are counted, not as active');
    assert.deepEqual(
      def.channels,
      h.snapshot.channels.filter((c) => c.groups.has('default')).map((c) => c.name),
    );
    assert.equal(def.inflight, 0);
    assert.deepEqual(resellers, {
      name: 'resellers',
      declared: true,
      limits: { rpm: null, max_parallel: 2 },
      max_concurrency: null,
      channels: [],
      tokens: { total: 0, active: 0 },
      inflight: 0,
      waiting: 0,
    });
    assert.deepEqual(legacy, {
      name: 'legacy',
      declared: false,
      limits: null,
      max_concurrency: null,
      channels: [],
      tokens: { total: 1, active: 1 },
      inflight: 0,
      waiting: 0,
    });
  });

  test('GET /admin/groups wants the admin key', async () => {
    const res = await fetch(`${h.url}/admin/groups`);
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
  });

  test("a reload that changes a group's limits shows at once", async () => {
    const file = join(dir, 'channels.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('limits: { rpm: 120, max_parallel: 6 }', 'limits: { rpm: 30 }'));
    h.reload();
    const def = (await groups())[0]!;
    assert.deepEqual(def.limits, { rpm: 30, max_parallel: null });
  });
});

describe('gateway groups', () => {
  test('prints each group with its limits and tokens from the store; --json is the admin answer without inflight', async () => {
    const dir = configDir();
    const db = join(dir, 'gateway.db');
    try {
      const store = await openStore(db);
      await store.createToken({ name: 'a', keyHash: hashKey(generateKey()), group: 'resellers', models: null, quota: null });
      await store.createToken({ name: 'b', keyHash: hashKey(generateKey()), group: 'gone', models: null, quota: null });
      await store.close();
      const env = { GATEWAY_CONFIG_DIR: dir, GATEWAY_DB: db };
      const text = runCli(['groups'], env);
      assert.equal(text.status, 0, text.stderr);
      const lines = text.stdout.trim().split('\n');
      assert.equal(lines.length, 3);
      assert.match(lines[0]!, /^default {2}limits: rpm=120 max_parallel=6 {2}max_concurrency=40 {2}channels=\S+ {2}tokens=0 \(0 active\)$/);
      assert.equal(lines[1], 'resellers  limits: max_parallel=2  max_concurrency=unlimited  channels=-  tokens=1 (1 active)');
      assert.match(lines[2]!, /^gone {2}limits: none .*tokens=1 \(1 active\) {2}NOT DECLARED in channels\.yaml/);
      const json = runCli(['groups', '--json'], env);
      assert.equal(json.status, 0, json.stderr);
      const parsed = JSON.parse(json.stdout) as { groups: { name: string; limits: unknown }[] };
      assert.deepEqual(
        parsed.groups.map((g) => [g.name, g.limits]),
        [
          ['default', { rpm: 120, max_parallel: 6 }],
          ['resellers', { rpm: null, max_parallel: 2 }],
          ['gone', null],
        ],
      );
      const bad = runCli(['groups', '--nope'], env);
      assert.equal(bad.status, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A group's shared rate limits (channels.yaml `groups.<name>.limits`) across three real gateway
 * processes over one PostgreSQL schema and one Redis of the test's own, in front of `gateway sims`
 * (test/helpers/limit-replicas.ts): several keys of one group, none with limits of its own, send
 * concurrently through every replica, and exactly the group's rpm and max_parallel are admitted;
 * then Redis is stopped mid-test and each replica holds the group's limits in its own process
 * (docs/tokens-and-quota.md, "Rate limits", "Limits of a group" and "Across replicas").
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { count, startLimitReplicas, type LimitReplicas } from '../helpers/limit-replicas.js';
import { serviceUrl } from '../helpers/services.js';

const GROUP_LINE = '    description: Every token created without --group.\n';
const ALPHA_GROUPS = '    groups: [default]\n';

/**
 * A copy of the project's config with the groups of these tests, each used by one test only (a
 * group's window outlives a test): `g-par` and `g-par-after` are served by the alpha channel, for
 * calls that stay in flight.
 */
function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-group-replicas-'));
  for (const f of ['routes.yaml', 'channels.yaml', 'routes.d', 'channels.d', 'schemas']) cpSync(join(PROJECT_ROOT, f), join(dir, f), { recursive: true });
  const text = readFileSync(join(PROJECT_ROOT, 'channels.yaml'), 'utf8');
  assert.ok(text.includes(GROUP_LINE) && text.includes(ALPHA_GROUPS), 'the project config names its groups as this test expects');
  const groups = [
    ['g-rpm', '{ rpm: 10 }'],
    ['g-par', '{ max_parallel: 4 }'],
    ['g-before', '{ rpm: 2 }'],
    ['g-after', '{ rpm: 2 }'],
    ['g-par-after', '{ max_parallel: 1 }'],
  ]
    .map(([name, limits]) => `  ${name}:\n    limits: ${limits}\n`)
    .join('');
  // The first `groups: [default]` is alpha-primary's.
  writeFileSync(join(dir, 'channels.yaml'), text.replace(GROUP_LINE, GROUP_LINE + groups).replace(ALPHA_GROUPS, '    groups: [default, g-par, g-par-after]\n'));
  return dir;
}

const databaseUrl = serviceUrl('DATABASE_URL', "a group's rate limits across replicas over PostgreSQL and Redis");
if (databaseUrl) {
  describe("a group's rate limits across three replicas", { timeout: 180_000 }, () => {
    let set: LimitReplicas;
    let dir: string;
    before(async () => {
      dir = configDir();
      set = await startLimitReplicas(databaseUrl, dir);
    });
    after(async () => {
      await set?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    /** `n` keys of `group`, without limits of their own. */
    const keys = (group: string, n: number) => Array.from({ length: n }, () => set.key([], group));

    test('rpm N: of many concurrent requests from five keys of the group over three replicas, exactly N are admitted', async () => {
      const ks = keys('g-rpm', 5);
      const statuses = await set.burst(45, (base, i) => set.models(base, ks[i % ks.length] ?? ''));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [10, 35], statuses.join(','));
      const again = await set.burst(6, (base, i) => set.models(base, ks[i % ks.length] ?? ''));
      assert.deepEqual(again, [429, 429, 429, 429, 429, 429], "the group's window is full for every key on every replica");
      const refused = await set.models(set.bases[0] ?? '', ks[0] ?? '');
      assert.equal(refused.status, 429);
      assert.match(((await refused.json()) as { message: string }).message, /this API key's group g-rpm is limited to 10 requests per minute/);
      assert.equal((await set.models(set.bases[1] ?? '', set.key([]))).status, 200, 'a key of another group is not counted against it');
      // Every replica counts its refusals as the group's, by the group's name.
      const refusedBy = await Promise.all(
        set.bases.map(async (base) =>
          Number(/gateway_rate_limited_total\{limit="rpm",scope="group",group="g-rpm"\} (\d+)/.exec(await set.metrics(base))?.[1] ?? 0),
        ),
      );
      assert.equal(
        refusedBy.reduce((a, b) => a + b, 0),
        35 + 6 + 1,
        refusedBy.join(','),
      );
    });

    test('max_parallel M: of many concurrent calls from four keys of the group over three replicas, exactly M are in flight; the slots come back', async () => {
      const ks = keys('g-par', 4);
      // The simulator answers each call after 2 s: the admitted ones are in flight while the others arrive.
      const statuses = await set.burst(15, (base, i) => set.slow(base, ks[i % ks.length] ?? '', 2_000));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [4, 11], statuses.join(','));
      const later = await set.burst(4, (base, i) => set.models(base, ks[i] ?? ''));
      assert.deepEqual(later, [200, 200, 200, 200], 'every slot was given back when its answer ended');
    });

    test('Redis stopped mid-test: every replica keeps serving, each holding the group limits in its own process', async () => {
      const before = keys('g-before', 3);
      const shared = await set.burst(3, (base, i) => set.models(base, before[i] ?? ''));
      assert.deepEqual([count(shared, 200), count(shared, 429)], [2, 1], 'shared while Redis is up');
      await set.stopRedis();
      // rpm 2 per process: each replica admits 2 of the 3 it gets, from three keys; 6 in all where Redis admitted 2.
      const ks = keys('g-after', 3);
      for (const base of set.bases) {
        const statuses = [];
        for (const k of ks) statuses.push((await set.models(base, k)).status);
        assert.deepEqual(statuses, [200, 200, 429], `${base}: its own window`);
      }
      // max_parallel 1 per process: of two calls at once to each replica from two keys, one is admitted there.
      const par = keys('g-par-after', 2);
      const perReplica = await Promise.all(
        set.bases.map((base) =>
          Promise.all(
            par.map(async (k) => {
              const r = await set.slow(base, k, 1_000);
              await r.arrayBuffer();
              return r.status;
            }),
          ),
        ),
      );
      for (const statuses of perReplica) assert.deepEqual([count(statuses, 200), count(statuses, 429)], [1, 1], statuses.join(','));
      for (const base of set.bases) {
        const m = await set.metrics(base);
        assert.match(m, /gateway_redis_fallbacks_total\{op="window"\} [1-9]/);
        assert.match(m, /gateway_redis_fallbacks_total\{op="slot"\} [1-9]/);
      }
    });
  });
}

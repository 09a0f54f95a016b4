/**
 * A key's rate limits across three real gateway processes over one PostgreSQL schema
 * (DATABASE_URL) and one Redis (a redis-server of the test's own, so the test can stop it), in
 * front of one `gateway sims` process: requests per minute and in flight held exactly under
 * concurrent load spread over the replicas; Redis hung (SIGSTOP) under load, and each request waits
 * at most one timeout for it; Redis restarted empty, and the window rebuilt from the replicas; then
 * Redis stopped mid-test, and each replica keeps serving with the limits of its own process
 * (docs/tokens-and-quota.md, "Rate limits").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { count, startLimitReplicas, type LimitReplicas } from '../helpers/limit-replicas.js';
import { serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const databaseUrl = serviceUrl('DATABASE_URL', 'rate limits of keys across replicas over PostgreSQL and Redis');
if (databaseUrl) {
  describe('rate limits of a key across three replicas', { timeout: 180_000 }, () => {
    let set: LimitReplicas;
    before(async () => {
      set = await startLimitReplicas(databaseUrl);
    });
    after(async () => {
      await set?.stop();
    });

    test('rpm N: of many concurrent requests over three replicas, exactly N are admitted in the window', async () => {
      const k = set.key(['--rpm', '10']);
      const statuses = await set.burst(45, (base) => set.models(base, k));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [10, 35], statuses.join(','));
      const again = await set.burst(6, (base) => set.models(base, k));
      assert.deepEqual(again, [429, 429, 429, 429, 429, 429], 'the window is still full on every replica');
    });

    test('max_parallel M: of many concurrent calls over three replicas, exactly M are in flight; their slots come back', async () => {
      const k = set.key(['--max-parallel', '4']);
      // The simulator answers each call after 2 s: the admitted ones are in flight while the others arrive.
      const statuses = await set.burst(15, (base) => set.slow(base, k, 2_000));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [4, 11], statuses.join(','));
      const after = await set.burst(3, (base) => set.models(base, k));
      assert.deepEqual(after, [200, 200, 200], 'every slot was given back when its answer ended');
    });

    test('Redis hung (SIGSTOP) under load: each replica waits one timeout at most, then counts in its own process; shared again soon after SIGCONT', async () => {
      const k = set.key(['--rpm', '5', '--max-parallel', '3']);
      assert.deepEqual(await set.burst(3, (base) => set.models(base, k)), [200, 200, 200], 'shared while Redis answers');
      set.redis.pause();
      try {
        // Each replica in turn, its requests one after another: without the rule each would wait
        // for Redis twice (the slot, then the window), a second each, for as long as Redis hangs.
        for (const base of set.bases) {
          const started = performance.now();
          const statuses = [];
          for (let i = 0; i < 8; i++) statuses.push((await set.models(base, k)).status);
          const ms = performance.now() - started;
          assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429, 429, 429], `${base}: 5 a minute in its own window, the one it counted shared included`);
          assert.ok(ms < 4_000, `${base}: 8 requests took ${Math.round(ms)} ms with Redis hung (one timeout is 1 s; 16 would be 16 s)`);
          const text = await set.metrics(base);
          assert.match(text, /gateway_redis_up 0/, `${base}: Redis reported away while it hangs`);
          const cut = Number(/gateway_dependency_timeouts_total\{dependency="redis"\} (\d+)/.exec(text)?.[1] ?? 0);
          assert.ok(
            cut >= 1 && cut <= 3,
            `${base}: commands cut by the timeout: ${cut} (a request's first check, or a background one, finds Redis hung; nothing after waits)`,
          );
          assert.equal(
            set.output(base).match(/Redis unreachable/g)?.length,
            1,
            `${base}: one warning:\n${set
              .output(base)
              .split('\n')
              .filter((l) => /Redis/.test(l))
              .join('\n')}`,
          );
        }
      } finally {
        set.redis.resume();
      }
      // Back within seconds of SIGCONT (each replica's probe answers within a second of it).
      const resumed = performance.now();
      await set.sharedAgain();
      assert.ok(performance.now() - resumed < 15_000, 'shared again within seconds');
      const fresh = set.key(['--rpm', '2']);
      const statuses = await set.burst(6, (base) => set.models(base, fresh));
      assert.deepEqual([count(statuses, 200), count(statuses, 429)], [2, 4], 'exact across the replicas again');
    });

    test('Redis restarted empty: the window is rebuilt from what each replica counted, so a key gets at most N times its rpm in one window', async () => {
      const k = set.key(['--rpm', '4']);
      assert.deepEqual(await set.burst(3, (base) => set.models(base, k)), [200, 200, 200], 'one counted shared on each replica');
      await set.redis.stop();
      for (const base of set.bases) await until(`${base} to see Redis gone`, async () => /gateway_redis_up 0/.test(await set.metrics(base)), 20_000);
      let away = 0;
      for (const base of set.bases) {
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push((await set.models(base, k)).status);
        assert.deepEqual(statuses, [200, 200, 200, 429, 429], `${base}: its own window goes on from the one it counted`);
        away += count(statuses, 200);
      }
      await set.redis.start();
      await set.sharedAgain();
      const after = await set.burst(6, (base) => set.models(base, k));
      assert.deepEqual(after, [429, 429, 429, 429, 429, 429], 'the rebuilt window holds what the replicas counted');
      assert.equal(3 + away, 12, 'in one window: at most 3 replicas × rpm 4 (before this fix: 3 + 12 + 4 more after the restart)');
    });

    test('Redis stopped mid-test: every replica keeps serving, each holding the limit in its own process', async () => {
      const k = set.key(['--rpm', '2']);
      await set.sharedAgain();
      const shared = await set.burst(3, (base) => set.models(base, k));
      assert.deepEqual([count(shared, 200), count(shared, 429)], [2, 1], 'shared while Redis is up');
      await set.stopRedis();
      const fresh = set.key(['--rpm', '2']);
      // Per process: each replica admits 2 of the 3 it gets; 6 in all where Redis admitted 2.
      for (const base of set.bases) {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await set.models(base, fresh)).status);
        assert.deepEqual(statuses, [200, 200, 429], `${base}: its own window`);
      }
      const plain = set.key([]);
      for (const base of set.bases) assert.equal((await set.models(base, plain)).status, 200, 'a key without limits is served as ever');
      for (const base of set.bases) assert.match(await set.metrics(base), /gateway_redis_fallbacks_total\{op="window"\} [1-9]/);
    });
  });
}

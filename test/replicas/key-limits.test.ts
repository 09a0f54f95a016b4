/**
 * A key's rate limits across three real gateway processes over one PostgreSQL schema
 * (DATABASE_URL) and one Redis (a redis-server of the test's own, so the test can stop it), in
 * front of one `gateway sims` process: requests per minute and in flight held exactly under
 * concurrent load spread over the replicas; then Redis stopped mid-test, and each replica keeps
 * serving with the limits of its own process (docs/tokens-and-quota.md, "Rate limits").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { count, startLimitReplicas, type LimitReplicas } from '../helpers/limit-replicas.js';
import { serviceUrl } from '../helpers/services.js';

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

    test('Redis stopped mid-test: every replica keeps serving, each holding the limit in its own process', async () => {
      const k = set.key(['--rpm', '2']);
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

/**
 * The keys' rate limits through a real Redis (REDIS_URL, a key prefix of the test's own): two
 * limiters, as two replicas, share one window and one count in flight; Redis stopped (a server of
 * the test's own), each counts in its own process, and sharing resumes when it is back.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { groupSubject, KeyLimiter } from '../../src/live/key-limiter.js';
import { RedisLive } from '../../src/live/redis-live.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { privateRedis, redisPrefixes, serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';

const redisUrl = serviceUrl('REDIS_URL', 'rate limits of keys over Redis');
if (redisUrl) {
  const prefixes = redisPrefixes(redisUrl);
  const opened: RedisLive[] = [];
  after(() => Promise.all(opened.map((l) => l.close())));
  const open = async (prefix: string, replica: string, url = redisUrl, metrics = new Metrics()) => {
    const live = await RedisLive.open({ url, prefix, replica, log: silentLogger(), metrics });
    opened.push(live);
    return Object.assign(new KeyLimiter(live), { live });
  };

  test('redis: two replicas share one key window: exactly N of many concurrent requests are admitted', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    const limits = { rpm: 7, maxParallel: null };
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).admit('tok', limits)));
    assert.equal(answers.filter((x) => x.admitted).length, 7);
    const refused = answers.find((x) => !x.admitted);
    assert.ok(refused && !refused.admitted);
    assert.equal(refused.refusedBy, 'rpm');
    assert.ok(refused.retryAfterMs > 55_000 && refused.retryAfterMs <= 60_000, `the wait until the oldest leaves: ${refused.retryAfterMs}`);
    const remaining = answers.flatMap((x) => (x.admitted ? [x.remaining] : [])).sort((x, y) => x - y);
    assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6], 'each admitted request saw what was left after it');
    assert.ok((await a.admit('other', limits)).admitted, 'another key has its own window');
  });

  test('redis: two replicas share one count in flight; a released slot is free again for either', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    const limits = { rpm: null, maxParallel: 3 };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).admit('tok', limits)));
    const held = answers.filter((x) => x.admitted);
    assert.equal(held.length, 3);
    const one = held[0];
    assert.ok(one?.admitted);
    one.release();
    const again = await until('the released slot to be free', async () => {
      const x = await b.admit('tok', limits);
      return x.admitted ? x : null;
    });
    assert.ok(again.admitted);
    assert.equal((await a.admit('tok', limits)).admitted, false, 'still 3 at most');
  });

  test('redis: two replicas share a group window and its slots; a refund takes the request back out of the shared window', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    const group = groupSubject('team');
    const limits = { rpm: 5, maxParallel: 2 };
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).admit(group, limits)));
    const held = answers.filter((x) => x.admitted);
    assert.equal(held.length, 2, 'two in flight at once across both');
    assert.ok(answers.filter((x) => !x.admitted).every((x) => !x.admitted && x.refusedBy === 'max_parallel'));
    for (const x of held) x.release();
    const more = [];
    for (let i = 0; i < 3; i++) {
      const x = await (i % 2 ? a : b).admit(group, limits);
      assert.ok(x.admitted);
      x.release();
      more.push(x);
    }
    const last = more[2];
    assert.ok(last?.admitted);
    assert.equal(last.remaining, 0, 'five counted in the shared window');
    last.refund();
    const again = await until('the refunded request to leave the window', async () => {
      const x = await a.admit(group, limits);
      return x.admitted ? x : null;
    });
    assert.equal(again.remaining, 0);
    again.release();
    const over = await b.admit(group, limits);
    assert.ok(!over.admitted);
    assert.equal(over.refusedBy, 'rpm');
    assert.ok((await a.admit('team', limits)).admitted, "a token id equal to the group's name shares nothing with it");
  });

  test('redis: stopped, each replica goes on from what it counted; restarted empty, the window is rebuilt from the replicas', async () => {
    const redis = await privateRedis();
    try {
      const prefix = prefixes.next();
      const metrics = new Metrics();
      const [a, b] = [await open(prefix, 'a', redis.url, metrics), await open(prefix, 'b', redis.url)];
      const limits = { rpm: 2, maxParallel: null };
      assert.ok((await a.admit('tok', limits)).admitted);
      assert.ok((await b.admit('tok', limits)).admitted);
      assert.equal((await a.admit('tok', limits)).admitted, false, 'shared: 2 in all');
      await redis.stop();
      await until('both to count in their own process', () => !a.live.up && !b.live.up, 10_000);
      assert.ok((await a.admit('tok', limits)).admitted, "a's own window held the one it counted through Redis: one more");
      assert.equal((await a.admit('tok', limits)).admitted, false, 'and no more');
      assert.ok((await b.admit('tok', limits)).admitted, "b's own window is its own");
      assert.equal((await b.admit('tok', limits)).admitted, false, 'b also goes on from its one');
      assert.match(await metrics.text(), /gateway_redis_fallbacks_total\{op="window"\} [1-9]/);
      // Restarted empty: each replica puts back what it counted before sharing again.
      await redis.start();
      await until('both to share again', () => a.live.up && b.live.up, 10_000);
      assert.equal((await a.admit('tok', limits)).admitted, false, 'the rebuilt window holds the 4 the replicas counted');
      assert.equal((await b.admit('tok', limits)).admitted, false);
      const fresh = { rpm: 1, maxParallel: null };
      assert.ok((await a.admit('fresh', fresh)).admitted);
      assert.equal((await b.admit('fresh', fresh)).admitted, false, 'b sees the request a counted through Redis');
    } finally {
      await redis.stop();
    }
  });

  test('redis hung (SIGSTOP): one call waits one timeout, then none waits until a probe answers; limits per process meanwhile', async () => {
    const redis = await privateRedis();
    try {
      const metrics = new Metrics();
      const live = await RedisLive.open({
        url: redis.url,
        prefix: prefixes.next(),
        replica: 'a',
        log: silentLogger(),
        metrics,
        commandTimeoutMs: 500,
        probeEveryMs: 100,
      });
      opened.push(live);
      const a = new KeyLimiter(live);
      const limits = { rpm: 5, maxParallel: 2 };
      const first = await a.admit('tok', limits);
      assert.ok(first.admitted);
      first.release();
      redis.pause();
      const answers = [];
      for (let i = 0; i < 12; i++) {
        const x = await a.admit('tok', limits);
        if (x.admitted) x.release();
        answers.push(x.admitted);
      }
      assert.deepEqual(
        answers,
        [true, true, true, true, false, false, false, false, false, false, false, false],
        "5 a minute, counted in a's own window from the one shared",
      );
      assert.equal(live.up, false);
      const text = await metrics.text();
      assert.match(text, /gateway_redis_up 0/);
      // Every command but the first found Redis away and was not sent: only the first was cut by the budget.
      const cut = Number(/gateway_dependency_timeouts_total\{dependency="redis"\} (\d+)/.exec(text)?.[1] ?? 0);
      assert.ok(cut >= 1 && cut <= 2, `calls cut by the budget: ${cut} (12 requests of two checks each)`);
      redis.resume();
      await until('Redis to be shared again after SIGCONT', () => live.up, 10_000);
      assert.match(await metrics.text(), /gateway_redis_up 1/);
      const other = new KeyLimiter(live);
      assert.equal((await other.admit('tok', limits)).admitted, false, 'the window this replica kept is in Redis again (5 counted)');
    } finally {
      await redis.stop();
    }
  });
}

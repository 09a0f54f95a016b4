/**
 * Live state shared through a real Redis (REDIS_URL): slots under one limit across replicas, a dead
 * replica's slots coming back, the single probe, events and announcements, and what happens while
 * Redis is away (a Redis server of the test's own, stopped and started again).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { silentLogger } from '../../src/log.js';
import { RedisLive } from '../../src/live/redis-live.js';
import { TAKE_SLOT } from '../../src/live/redis-scripts.js';
import type { LiveEvent } from '../../src/live/shared-live.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { loadConfigOrThrow } from '../../src/config/load.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';
import { RoutingState } from '../../src/routing/routing-state.js';
import type { CompiledChannel, Snapshot } from '../../src/config/snapshot.js';
import { privateRedis, redisPrefixes, serviceUrl } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { runCli } from '../helpers/process.js';
import { hashKey } from '../../src/tokens/keys.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const redisUrl = serviceUrl('REDIS_URL', 'shared live state over Redis');
if (redisUrl) {
  const prefixes = redisPrefixes(redisUrl);
  const opened: RedisLive[] = [];
  after(() => Promise.all(opened.map((l) => l.close())));
  const open = async (prefix: string, replica: string, extra: { slotLeaseMs?: number; url?: string; metrics?: Metrics } = {}) => {
    const live = await RedisLive.open({
      url: extra.url ?? redisUrl,
      prefix,
      replica,
      log: silentLogger(),
      metrics: extra.metrics ?? new Metrics(),
      slotLeaseMs: extra.slotLeaseMs,
    });
    opened.push(live);
    return live;
  };

  test('redis: two replicas share one limit; a released slot is free again for either', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    assert.ok(a.up && b.up);
    const held = [await a.takeSlot('channel:x', 2), await b.takeSlot('channel:x', 2)];
    assert.ok(held.every(Boolean), 'two slots of two');
    assert.equal(await a.takeSlot('channel:x', 2), null, 'a third is refused on a…');
    assert.equal(await b.takeSlot('channel:x', 2), null, '…and on b');
    assert.ok(await b.takeSlot('channel:other', 1), 'another limit is its own');
    held[0]!.release();
    held[0]!.release();
    const again = await until('the released slot to be free', () => b.takeSlot('channel:x', 2));
    assert.ok(again);
    assert.equal(await a.takeSlot('channel:x', 2), null, 'releasing twice gave back one slot');
  });

  test("redis: a dead replica's slots come back when their leases run out, and a live one's are renewed", async () => {
    const prefix = prefixes.next();
    const a = await open(prefix, 'a', { slotLeaseMs: 400 });
    const mine = await a.takeSlot('channel:y', 2);
    assert.ok(mine);
    // What a replica killed mid-call leaves: a slot with a short lease nobody renews.
    const raw = new Redis(redisUrl);
    try {
      assert.equal(await raw.eval(TAKE_SLOT, 1, `${prefix}slots:channel:y`, 2, 'dead:1', 400), 2, 'taken: the second slot held');
    } finally {
      raw.disconnect();
    }
    assert.equal(await a.takeSlot('channel:y', 2), null, 'both slots held');
    const back = await until("the dead replica's slot to come back", () => a.takeSlot('channel:y', 2), 5_000);
    // a's own first slot outlived its lease because a renews it: the limit still holds.
    assert.equal(await a.takeSlot('channel:y', 2), null, "a's renewed slot and the one it took back");
    back.release();
    mine.release();
  });

  test('redis: one probe across replicas; it is free again once its holder ends it', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    assert.equal(await a.claimProbe('ch'), true);
    assert.equal(await b.claimProbe('ch'), false);
    b.endProbe('ch'); // not b's: it stays a's
    assert.equal(await b.claimProbe('ch'), false);
    a.endProbe('ch');
    assert.equal(await until("a's probe to end", () => b.claimProbe('ch')), true);
  });

  test('redis: events reach the other replicas (not the sender); open breakers and announcements are readable', async () => {
    const prefix = prefixes.next();
    const [a, b] = [await open(prefix, 'a'), await open(prefix, 'b')];
    const seenByA: LiveEvent[] = [];
    const seenByB: LiveEvent[] = [];
    a.onEvent((e) => seenByA.push(e));
    b.onEvent((e) => seenByB.push(e));
    const retryAt = Date.now() + 60_000;
    a.publish({ t: 'breaker', channel: 'ch', state: 'open', openedAt: Date.now(), retryAt });
    a.publish({ t: 'token', keyHash: 'abc' });
    await until('b to hear both', () => seenByB.length >= 2);
    assert.deepEqual(
      seenByB.map((e) => e.t),
      ['breaker', 'token'],
    );
    assert.equal(seenByA.length, 0, 'a does not hear itself');
    const kept = await b.openBreakers(['ch', 'other']);
    assert.deepEqual([...kept.keys()], ['ch']);
    assert.equal(kept.get('ch')!.retryAt, retryAt);
    a.publish({ t: 'breaker', channel: 'ch', state: 'closed', openedAt: null, retryAt: null });
    await until('the closing to be heard', () => seenByB.length >= 3);
    assert.equal((await b.openBreakers(['ch'])).size, 0, 'a closed breaker is no longer kept');

    a.announce(() => ({ replica: 'a', generation: 3, version: 'v1', loadedAt: new Date(0).toISOString(), lastReloadOk: true }));
    b.announce(() => ({ replica: 'b', generation: 1, version: 'v2', loadedAt: new Date(0).toISOString(), lastReloadOk: null }));
    const replicas = await until('both announcements', async () => ((await a.replicas())?.length === 2 ? a.replicas() : null));
    assert.deepEqual(
      replicas!.map((r) => [r.replica, r.version, r.generation]),
      [
        ['a', 'v1', 3],
        ['b', 'v2', 1],
      ],
    );
  });

  /** Two replicas' routing states over one Redis prefix, serving the alpha channel changed by `patch`. */
  const twoReplicas = async (patch: (alpha: CompiledChannel) => Partial<CompiledChannel>) => {
    const prefix = prefixes.next();
    const base = loadConfigOrThrow(PROJECT_ROOT, { env: { ALPHA_BASE_URL: 'http://127.0.0.1:9', ALPHA_API_KEY: 'k' } });
    const alpha = base.channelsByName.get('alpha-primary')!;
    const channel: CompiledChannel = { ...alpha, ...patch(alpha) };
    const snapshot: Snapshot = { ...base, channels: [channel], channelsByName: new Map([[channel.name, channel]]) };
    const one = new RoutingState(new Metrics(), () => snapshot, Date.now, await open(prefix, 'one'));
    const two = new RoutingState(new Metrics(), () => snapshot, Date.now, await open(prefix, 'two'));
    return { channel, one, two };
  };

  test('redis: two routing states share a channel limit, and a breaker opened on one opens on the other', async () => {
    const { channel, one, two } = await twoReplicas((alpha) => ({
      maxConcurrency: 1,
      breaker: { ...alpha.breaker, enabled: true, consecutiveFailures: 1, cooldownMs: 60_000 },
    }));
    const slot = await one.enter(channel);
    assert.ok(!('reason' in slot));
    assert.deepEqual(await two.enter(channel), { reason: 'saturated' }, 'max_concurrency 1 across both');
    slot.done('failure', { code: 'bad_response', message: 'x' });
    assert.equal(one.stateOf(channel), 'open');
    await until("two to follow one's breaker", () => two.stateOf(channel) === 'open');
    const skip = await two.enter(channel);
    assert.ok('reason' in skip && skip.reason === 'open');
  });

  test("a request waiting in a channel's line on one replica gets the slot another replica gives back (the first in line looks again)", async () => {
    const { channel, one, two } = await twoReplicas(() => ({ maxConcurrency: 1, queue: { maxWaiting: 1, maxWaitMs: 10_000 } }));
    const held = await one.enter(channel);
    assert.ok(!('reason' in held));
    const waiting = two.enterWaiting(channel, performance.now() + 10_000);
    await until('two to wait in its line', () => two.waiting('channel', channel.name) === 1);
    // Given back on one: nothing wakes two's line but its own looking again.
    held.done('success');
    const got = await waiting;
    assert.ok('slot' in got && !('reason' in got.slot), 'two took the slot one gave back');
    assert.deepEqual(await one.enter(channel), { reason: 'saturated' }, 'and holds it across both');
    if ('slot' in got && !('reason' in got.slot)) got.slot.done('success');
  });

  test('when the first in a line leaves, the next one looks again in its place (a slot given back on another replica reaches it)', async () => {
    const { channel, one, two } = await twoReplicas(() => ({ maxConcurrency: 1, queue: { maxWaiting: 2, maxWaitMs: 60_000 } }));
    const held = await one.enter(channel);
    assert.ok(!('reason' in held));
    // The first waiter gives up after 300 ms; the second would wait 30 s.
    const first = two.enterWaiting(channel, performance.now() + 300);
    await until('the first to wait', () => two.waiting('channel', channel.name) === 1);
    const second = two.enterWaiting(channel, performance.now() + 30_000);
    const gaveUp = await first;
    assert.ok('refused' in gaveUp && gaveUp.refused === 'timeout');
    held.done('success');
    const started = performance.now();
    const got = await second;
    assert.ok('slot' in got && !('reason' in got.slot), 'the second took the slot one gave back');
    assert.ok(performance.now() - started < 15_000, 'by looking again, not at the end of its wait');
    if ('slot' in got && !('reason' in got.slot)) got.slot.done('success');
  });

  test('redis away: operations answer "not shared" at once and are counted; when it is back, sharing resumes and a resync is signalled', async () => {
    const server = await privateRedis();
    after(() => server.stop());
    const metrics = new Metrics();
    const live = await open('gw:', 'solo', { url: server.url, metrics });
    let resyncs = 0;
    live.onResync(() => resyncs++);
    assert.ok(await live.takeSlot('channel:z', 1));
    await server.stop();
    await until('the replica to see Redis gone', () => !live.up);
    assert.equal(await live.takeSlot('channel:z', 1), undefined, 'per process while Redis is away');
    assert.equal(await live.claimProbe('ch'), true, 'each replica probes for itself');
    live.publish({ t: 'reload' });
    const text = await metrics.registry.metrics();
    assert.match(text, /gateway_redis_up 0/);
    assert.match(text, /gateway_redis_fallbacks_total\{op="slot"\} 1/);
    assert.match(text, /gateway_redis_fallbacks_total\{op="publish"\} 1/);
    await server.start();
    await until('the replica to reconnect', () => live.up, 15_000);
    await until('a resync after reconnecting', () => resyncs > 0);
    assert.ok(await live.takeSlot('channel:z', 1), 'shared again (the restarted Redis is empty)');
    assert.match(await metrics.registry.metrics(), /gateway_redis_up 1/);
  });

  test('redis: a token disabled with the CLI (a real process, not a replica) is told to every replica', async () => {
    const prefix = prefixes.next();
    const replica = await open(prefix, 'r1');
    const heard: LiveEvent[] = [];
    replica.onEvent((e) => heard.push(e));
    const dir = mkdtempSync(join(tmpdir(), 'gw-cli-redis-'));
    try {
      const env = { GATEWAY_DB: join(dir, 'cli.db'), GATEWAY_REDIS: redisUrl, GATEWAY_REDIS_PREFIX: prefix };
      const key = runCli(['tokens', 'create', '--group', 'default'], env).stdout.trim();
      const id = (JSON.parse(runCli(['tokens', 'list', '--json'], env).stdout) as { id: string }[])[0]!.id;
      const r = runCli(['tokens', 'disable', id], env);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /the replicas were told through Redis/);
      const event = await until('the token event', () => heard.find((e) => e.t === 'token'));
      assert.deepEqual(event, { t: 'token', keyHash: hashKey(key) });
      assert.ok(
        ((await replica.replicas()) ?? []).every((x) => x.replica !== 'cli'),
        'the CLI does not announce itself as a replica',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * A token's IP allow-list and its last use over real HTTP (docs/tokens-and-quota.md, "IP
 * allow-list", "Last use"): the client's address as GATEWAY_TRUST_PROXY finds it (the loopback proxy
 * believed, X-Forwarded-For naming IPv4, IPv6 and IPv4-mapped clients) decides, before the key's rate
 * limits count the request; and many requests a minute write each token's last use once, in batches.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { parseTrustProxy } from '../../src/http/trust-proxy.js';
import { silentLogger } from '../../src/log.js';
import type { TokenUse } from '../../src/store/store.js';
import { hashKey } from '../../src/tokens/keys.js';
import { readAnswer, startHarness, type Harness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const START = Date.parse('2026-05-01T12:00:00.000Z');

describe('IP allow-lists and last use over HTTP', () => {
  let h: Harness;
  let now = START;
  /** Every batch the gateway wrote of last uses. */
  const touches: TokenUse[][] = [];
  before(async () => {
    h = await startHarness({
      network: { trustProxy: parseTrustProxy('loopback') },
      records: { clock: () => new Date(now), lastUsedTickMs: 20 },
    });
    const touch = h.store.touchTokens.bind(h.store);
    h.store.touchTokens = async (uses) => {
      touches.push([...uses]);
      return touch(uses);
    };
  });
  after(() => h.close());

  const models = (base: string, key: string, from?: string) =>
    fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${key}`, ...(from ? { 'x-forwarded-for': from } : {}) } }).then(readAnswer);
  const fenced = async (list: string[], limits: { rpmLimit?: number } = {}) => {
    const key = await h.createKey(limits);
    const token = await h.store.findTokenByHash(hashKey(key));
    await h.store.setTokenAllowedIps(token!.id, list);
    return key;
  };

  test('the client address a believed proxy names decides: IPv4, IPv6 and IPv4-mapped inside pass, others are 403 naming the address', async () => {
    const key = await fenced(['203.0.113.0/24', '2001:db8::/32']);
    for (const inside of ['203.0.113.9', '198.51.100.1, 203.0.113.200', '2001:db8::5', '::ffff:203.0.113.10']) {
      const r = await models(h.url, key, inside);
      assert.equal(r.status, 200, `${inside}: ${r.text}`);
    }
    for (const [outside, named] of [
      ['198.51.100.1', '198.51.100.1'],
      ['203.0.113.9, 198.51.100.2', '198.51.100.2'],
      ['2001:db9::1', '2001:db9::1'],
      [undefined, '127.0.0.1'],
    ] as const) {
      const r = await models(h.url, key, outside);
      assert.equal(r.status, 403, `${outside}: ${r.text}`);
      assert.deepEqual([r.json.error.code, r.json.error.type], ['ip_not_allowed', 'svc_api_error'], r.text);
      assert.match(r.json.error.message, new RegExp(`used from ${named.replace(/\./g, '\\.')};`));
      assert.doesNotMatch(r.text, /203\.0\.113\.0|2001:db8::\/32/, 'never the list');
    }
  });

  test('a gateway that believes no proxy checks the peer: what X-Forwarded-For says changes nothing', async () => {
    const key = await fenced(['203.0.113.0/24']);
    const gw: Gateway = createGateway({ snapshot: () => h.snapshot, store: h.store, log: silentLogger(), poll: false });
    await gw.listen(0);
    try {
      const r = await models(gw.url(), key, '203.0.113.9');
      assert.equal(r.status, 403);
      assert.match(r.json.error.message, /127\.0\.0\.1/);
    } finally {
      await gw.close();
    }
  });

  test('a refused address is decided with the key, before the rate limits: it takes no place in the window and gets no x-ratelimit headers', async () => {
    const key = await fenced(['203.0.113.0/24'], { rpmLimit: 1 });
    for (let i = 0; i < 5; i++) {
      const r = await models(h.url, key, '198.51.100.1');
      assert.equal(r.status, 403);
      assert.equal(r.headers.get('x-ratelimit-limit-requests'), null);
    }
    const first = await models(h.url, key, '203.0.113.1');
    assert.equal(first.status, 200, 'the one request of the minute is still there');
    assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal((await models(h.url, key, '203.0.113.1')).status, 429);
  });

  test('last use: 120 requests of two keys over a minute write each token twice at most, in batches, and only forward', async () => {
    const keys = [await h.createKey(), await h.createKey()];
    const ids = await Promise.all(keys.map(async (k) => (await h.store.findTokenByHash(hashKey(k)))!.id));
    const writesOf = (id: string) => touches.flat().filter((u) => u.id === id);
    const burst = async () => {
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => models(h.url, keys[i % 2]!)));
      assert.ok(answers.every((r) => r.status === 200));
    };
    const t0 = now;
    await burst();
    await until('one write of each token', () => ids.every((id) => writesOf(id).length === 1));
    for (const id of ids) assert.equal((await h.store.getToken(id))?.lastUsedAt, t0);
    now = t0 + 30_000;
    await burst();
    assert.equal(await h.gateway.lastUsed.flush(false), 0, 'nothing is due within the minute');
    for (const id of ids) {
      assert.equal(writesOf(id).length, 1, '60 more requests, no write');
      assert.equal((await h.store.getToken(id))?.lastUsedAt, t0, 'the store still holds the first minute');
    }
    now = t0 + 60_000;
    await until('the second write of each token', () => ids.every((id) => writesOf(id).length === 2));
    for (const id of ids) assert.equal((await h.store.getToken(id))?.lastUsedAt, t0 + 30_000, 'the latest use noted');
    const calls = touches.filter((batch) => batch.some((u) => ids.includes(u.id))).length;
    assert.ok(calls <= 4, `two keys, two minutes: at most four batches (${calls})`);
  });
});

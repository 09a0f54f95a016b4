/**
 * Names, rotation, last use and allow-lists of tokens, as units (src/tokens/token-ref.ts,
 * rotation.ts, last-used.ts, ip-allow.ts); their routes, commands and HTTP behaviour are tested in
 * test/admin/token-keys.test.ts, test/cli/token-keys.test.ts and test/gateway/token-keys.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../src/errors/gateway-error.js';
import type { TokenRecord, TokenUse } from '../../src/store/store.js';
import { allowedIpProblem, allowListProblem, checkClientAddress, ipAllowed } from '../../src/tokens/ip-allow.js';
import { LastUsed, TOUCH_GAP_MS } from '../../src/tokens/last-used.js';
import { keyHashesOf, MAX_GRACE_MS, parseGrace, replacedKeyRefusal } from '../../src/tokens/rotation.js';
import { defaultName, isTokenId, nameProblem, unknownToken } from '../../src/tokens/token-ref.js';

test('token names: 1 to 100 characters, no control characters, no white space at the ends, never shaped like an id', () => {
  for (const ok of ['ci', 'team a / prod', 'ключ-1', 'x'.repeat(100), '😀'.repeat(100), 'cli-3f9a1c2b']) assert.equal(nameProblem(ok), null, ok);
  const cases: [string, RegExp][] = [
    ['', /1 to 100/],
    ['x'.repeat(101), /1 to 100/],
    ['a\tb', /control/],
    ['a\u0085b', /control/],
    [' ci', /white space/],
    ['ci\u00a0', /white space/],
    ['3F2504E0-4F89-41D3-9A0C-0305E82C3301', /token id/],
  ];
  for (const [bad, why] of cases) assert.match(nameProblem(bad) ?? '', why, JSON.stringify(bad));
  assert.match(defaultName('cli'), /^cli-[0-9a-f]{8}$/);
  assert.notEqual(defaultName('admin'), defaultName('admin'));
  assert.equal(isTokenId('3f2504e0-4f89-41d3-9a0c-0305e82c3301'), true);
  assert.equal(isTokenId('3f2504e0-4f89-41d3-9a0c-0305e82c330'), false);
  assert.equal(unknownToken('3f2504e0-4f89-41d3-9a0c-0305e82c3301'), 'no token with id 3f2504e0-4f89-41d3-9a0c-0305e82c3301');
  assert.equal(unknownToken('ci'), 'no token named "ci"');
});

test('grace: 30s, 15m, 24h, 7d or 0, at most 30 days', () => {
  assert.deepEqual(['0', '30s', '15m', '24h', '7d', '30d', '720h'].map(parseGrace), [
    0,
    30_000,
    900_000,
    86_400_000,
    7 * 86_400_000,
    MAX_GRACE_MS,
    MAX_GRACE_MS,
  ]);
  for (const bad of ['31d', '721h', '1w', '-1s', '1.5h', 'h', '', '24 h', '00']) assert.equal(parseGrace(bad), null, bad);
});

test('a replaced key works until its grace ends, to the millisecond; the current key always; another hash never', () => {
  const t = { keyHash: 'new', previousKeyHash: 'old', previousKeyExpiresAt: 1_000 } as TokenRecord;
  assert.equal(replacedKeyRefusal(t, 'new', 5_000), null);
  assert.equal(replacedKeyRefusal(t, 'old', 999), null);
  assert.equal(replacedKeyRefusal(t, 'old', 1_000), 'the API key was replaced by a new one; it stopped working at 1970-01-01T00:00:01.000Z');
  assert.equal(replacedKeyRefusal(t, 'other', 0), 'the API key was replaced by a new one; it stopped working at 1970-01-01T00:00:01.000Z');
  assert.equal(replacedKeyRefusal({ keyHash: 'new' } as TokenRecord, 'stale', 0), 'the API key is not valid', 'a cached record of another key');
  assert.deepEqual(keyHashesOf({ keyHash: 'k1', previousKeyHash: 'k0' } as TokenRecord, { keyHash: 'k2', previousKeyHash: 'k1' } as TokenRecord, null), [
    'k1',
    'k0',
    'k2',
  ]);
});

test('allow-lists: IPv4 and IPv6 addresses and blocks, at most 100, each bad entry named; matching handles IPv4-mapped IPv6', () => {
  assert.equal(allowListProblem(['203.0.113.7', '10.0.0.0/8', '2001:db8::/32', '::1', '0.0.0.0/0', '::/0']), null);
  assert.match(allowListProblem([]) ?? '', /at least one/);
  assert.match(allowListProblem(Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`)) ?? '', /at most 100/);
  for (const bad of ['10.0.0.0/33', '2001:db8::/129', '10.0.0', 'example.com', '10.0.0.0/8/1', 'fe80::1%eth0', ' 10.0.0.1', '10.0.0.0/']) {
    assert.equal(allowListProblem(['10.1.1.1', bad]), allowedIpProblem(bad), 'the first bad entry is named');
    assert.match(allowedIpProblem(bad) ?? '', new RegExp(JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')), bad);
  }
  const list = ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'];
  for (const inside of ['203.0.113.7', '10.200.3.4', '2001:db8:1::5', '::ffff:10.1.2.3', '::FFFF:203.0.113.7'])
    assert.equal(ipAllowed(list, inside), true, inside);
  for (const outside of ['203.0.113.8', '11.0.0.1', '2001:db9::1', '::ffff:11.0.0.1', '', 'nonsense']) assert.equal(ipAllowed(list, outside), false, outside);
  assert.equal(ipAllowed(['::ffff:192.0.2.0/120'], '192.0.2.9'), true, 'a mapped block holds the IPv4 address');
  assert.throws(
    () => checkClientAddress(list, '198.51.100.4'),
    (err) => err instanceof GatewayError && err.code === 'ip_not_allowed' && /198\.51\.100\.4/.test(err.message) && !/10\.0\.0\.0/.test(err.message),
  );
  checkClientAddress(null, '198.51.100.4');
});

test('last use: any number of uses in a minute makes at most one write per token, batched; a stop writes what is left', async () => {
  let now = 1_000_000;
  const writes: TokenUse[][] = [];
  const lastUsed = new LastUsed({ touch: async (uses) => void writes.push([...uses]), clock: () => now, log: { warn: () => undefined } });
  for (let i = 0; i < 500; i++) lastUsed.note(i % 2 ? 'a' : 'b', now + i);
  assert.equal(await lastUsed.flush(false), 2);
  assert.equal(writes.length, 1, 'one batch');
  assert.deepEqual(
    writes[0]?.toSorted((x, y) => x.id.localeCompare(y.id)),
    [
      { id: 'a', at: now + 499 },
      { id: 'b', at: now + 498 },
    ],
    'the latest use of each',
  );
  now += 10_000;
  for (let i = 0; i < 500; i++) lastUsed.note('a', now + i);
  lastUsed.note('c', now);
  assert.equal(await lastUsed.flush(false), 1, 'a written within the minute waits; c, new, goes');
  assert.deepEqual(writes[1], [{ id: 'c', at: now }]);
  assert.equal(await lastUsed.flush(false), 0, 'nothing due');
  now += TOUCH_GAP_MS - 10_000;
  assert.equal(await lastUsed.flush(false), 1, "a's minute is over");
  assert.deepEqual(writes[2], [{ id: 'a', at: now - TOUCH_GAP_MS + 10_000 + 499 }]);
  lastUsed.note('a', now + 1);
  await lastUsed.close();
  assert.deepEqual(writes[3], [{ id: 'a', at: now + 1 }], 'a stop writes every note, whatever the minute');
  assert.equal(writes.length, 4);
});

test('last use: a batch the store refused is kept for the next tick, said once', async () => {
  let fail = true;
  const warned: unknown[] = [];
  const writes: TokenUse[][] = [];
  const lastUsed = new LastUsed({
    touch: async (uses) => {
      if (fail) throw new Error('store away');
      writes.push([...uses]);
    },
    clock: () => 0,
    log: { warn: (o: unknown) => void warned.push(o) },
  });
  lastUsed.note('a', 5);
  assert.equal(await lastUsed.flush(false), 0);
  lastUsed.note('a', 3);
  assert.equal(await lastUsed.flush(false), 0);
  assert.equal(warned.length, 1, 'once per outage');
  fail = false;
  assert.equal(await lastUsed.flush(false), 1);
  assert.deepEqual(writes, [[{ id: 'a', at: 5 }]], 'the latest use, kept');
});

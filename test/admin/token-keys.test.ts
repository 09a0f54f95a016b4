/**
 * Names, rotation and IP allow-lists through the admin routes (docs/tokens-and-quota.md, "Names
 * and rotation", "IP allow-list"), over real HTTP with a clock the test moves: every
 * `/admin/tokens/{token_id}…` route takes a name as well as an id, names are unique, a rotated key
 * keeps working for its grace and not a millisecond more, and an allow-list refuses other addresses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashKey } from '../../src/tokens/keys.js';
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';

const ADMIN_KEY = 'admin-token-keys-test-admin-key';
const START = Date.parse('2026-05-01T12:00:00.000Z');

describe('names, rotation and allow-lists through the admin routes', () => {
  let h: Harness;
  let now = START;
  before(async () => {
    h = await startHarness({ adminKey: ADMIN_KEY, records: { clock: () => new Date(now) } });
  });
  after(() => h.close());

  const admin = async (method: string, path: string, body?: unknown): Promise<JsonAnswer> =>
    readAnswer(
      await fetch(h.url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const create = async (body: Record<string, unknown>) => {
    const r = await admin('POST', '/admin/tokens', { group: 'default', ...body });
    assert.equal(r.status, 201, r.text);
    return r.json as { key: string; token: TokenView };
  };
  /** A cheap request of a key: the model list. */
  const use = (key: string) => fetch(`${h.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then(readAnswer);
  const refused = (r: JsonAnswer, status: number, code: string, param = '') => {
    assert.equal(r.status, status, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param ?? ''], [code, param], r.text);
  };
  const audit = async (action: string, target: string) =>
    (await admin('GET', `/admin/audit?action=${action}&target=${target}`)).json.audit as { before: TokenView; after: TokenView }[];

  test('every token route takes a name or an id: the same token either way, a name with spaces and a slash too', async () => {
    const { token } = await create({ name: 'team a/prod' });
    const name = encodeURIComponent(token.name);
    assert.deepEqual((await admin('GET', `/admin/tokens/${name}`)).json, token);
    assert.deepEqual((await admin('GET', `/admin/tokens/${token.id.toUpperCase()}`)).json, token, 'an id in capitals is the id');
    const steps: [string, string, unknown, (v: TokenView) => unknown, unknown][] = [
      ['POST', 'disable', undefined, (v) => v.disabled, true],
      ['POST', 'enable', undefined, (v) => v.disabled, false],
      ['POST', 'quota', { quota: 9 }, (v) => v.quota, 9],
      ['POST', 'limits', { rpm_limit: 600 }, (v) => v.rpm_limit, 600],
      ['POST', 'expiry', { expires_at: '2099-01-01T00:00:00Z' }, (v) => v.expires_at, '2099-01-01T00:00:00.000Z'],
      ['POST', 'allowed-ips', { allowed_ips: ['127.0.0.1'] }, (v) => v.allowed_ips, ['127.0.0.1']],
    ];
    for (const [method, action, body, read, expected] of steps) {
      const r = await admin(method, `/admin/tokens/${name}/${action}`, body);
      assert.equal(r.status, 200, `${action}: ${r.text}`);
      assert.deepEqual([r.json.id, read(r.json as TokenView)], [token.id, expected], action);
    }
    const ledger = await admin('GET', `/admin/tokens/${name}/ledger`);
    assert.equal(ledger.json.token.id, token.id);
    const rotated = await admin('POST', `/admin/tokens/${name}/rotate`, {});
    assert.equal(rotated.json.token.id, token.id);
    const renamed = await admin('POST', `/admin/tokens/${name}/name`, { name: 'team b' });
    assert.equal(renamed.json.name, 'team b');
    refused(await admin('GET', `/admin/tokens/${name}`), 404, 'not_found');
    const deleted = await admin('DELETE', `/admin/tokens/${encodeURIComponent('team b')}`);
    assert.deepEqual([deleted.status, deleted.json.token.id], [200, token.id]);
    refused(await admin('GET', `/admin/tokens/${token.id}`), 404, 'not_found');
  });

  test('names are unique: taken is 409 token_name_taken on create and rename; a bad name is 400 naming it', async () => {
    const a = await create({ name: 'unique-a' });
    const b = await create({ name: 'unique-b' });
    const count = ((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).length;
    const taken = await admin('POST', '/admin/tokens', { group: 'default', name: 'unique-a' });
    refused(taken, 409, 'token_name_taken', 'name');
    assert.match(taken.json.error.message, /a token named "unique-a" already exists/);
    refused(await admin('POST', `/admin/tokens/${b.token.id}/name`, { name: 'unique-a' }), 409, 'token_name_taken', 'name');
    assert.equal((await admin('GET', `/admin/tokens/${b.token.id}`)).json.name, 'unique-b', 'unchanged');
    for (const bad of ['', ' padded', 'tab\there', 'x'.repeat(101), '0b7e5c1a-1111-4222-8333-444455556666']) {
      refused(await admin('POST', '/admin/tokens', { group: 'default', name: bad }), 400, 'invalid_request', 'name');
      refused(await admin('POST', `/admin/tokens/${a.token.id}/name`, { name: bad }), 400, 'invalid_request', 'name');
    }
    refused(await admin('POST', `/admin/tokens/${a.token.id}/name`, {}), 400, 'invalid_request', 'name');
    assert.equal(((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).length, count, 'nothing was created');
    const renamed = await admin('POST', `/admin/tokens/unique-a/name`, { name: 'unique-c' });
    assert.equal(renamed.json.name, 'unique-c');
    assert.equal((await use(a.key)).status, 200, 'the key is the same');
    const [record] = await audit('token.rename', a.token.id);
    assert.deepEqual([record?.before.name, record?.after.name], ['unique-a', 'unique-c']);
    const two = [await create({}), await create({})];
    assert.notEqual(two[0]?.token.name, two[1]?.token.name, 'tokens made without a name get names of their own');
  });

  test('rotate: the new key is answered once; the old one works until its grace ends, to the millisecond; rotating again ends it at once', async () => {
    const { key: first, token } = await create({ name: 'rotating' });
    const r = await admin('POST', '/admin/tokens/rotating/rotate', { grace_seconds: 60 });
    assert.equal(r.status, 200, r.text);
    const second = r.json.key as string;
    assert.match(second, /^gw-[A-Za-z0-9_-]{43}$/);
    assert.notEqual(second, first);
    assert.equal(r.json.token.previous_key_expires_at, new Date(now + 60_000).toISOString());
    assert.equal((await use(first)).status, 200, 'the old key in its grace');
    assert.equal((await use(second)).status, 200, 'the new key');
    const view = (await admin('GET', `/admin/tokens/${token.id}`)).text;
    assert.ok(![first, second].some((k) => view.includes(k.slice(3)) || view.includes(hashKey(k))), 'no key nor hash in its view');
    now += 59_999;
    assert.equal((await use(first)).status, 200, 'a millisecond before the end');
    now += 1;
    const ended = await use(first);
    refused(ended, 401, 'invalid_api_key');
    assert.match(ended.json.error.message, /replaced by a new one; it stopped working at 2026-05-01T12:01:00\.000Z/);
    assert.equal((await use(second)).status, 200);
    // Again with a grace, then at once: the key in its grace stops at once too.
    const third = (await admin('POST', `/admin/tokens/${token.id}/rotate`, { grace_seconds: 3600 })).json.key as string;
    assert.equal((await use(second)).status, 200, 'the second key in its grace');
    const fourth = (await admin('POST', `/admin/tokens/${token.id}/rotate`, {})).json.key as string;
    for (const old of [first, second, third]) refused(await use(old), 401, 'invalid_api_key');
    assert.equal((await use(fourth)).status, 200);
    const records = await audit('token.rotate', token.id);
    assert.equal(records.length, 3);
    const text = JSON.stringify(records);
    assert.ok(![first, second, third, fourth].some((k) => text.includes(k.slice(3)) || text.includes(hashKey(k))), 'no key nor hash in the audit log');
    for (const [body, param] of [
      [{ grace_seconds: -1 }, 'grace_seconds'],
      [{ grace_seconds: 30 * 86_400 + 1 }, 'grace_seconds'],
      [{ grace_seconds: 1.5 }, 'grace_seconds'],
      [{ grace: 5 }, 'grace'],
    ] as const) {
      refused(await admin('POST', `/admin/tokens/${token.id}/rotate`, body), 400, 'invalid_request', param);
    }
    assert.equal((await use(fourth)).status, 200, 'a refused rotation changed nothing');
    refused(await admin('POST', '/admin/tokens/nobody/rotate', {}), 404, 'not_found');
    const bare = await admin('POST', `/admin/tokens/${token.id}/rotate`);
    assert.equal(bare.status, 200, `a POST with no body at all is a rotation without grace: ${bare.text}`);
    refused(await use(fourth), 401, 'invalid_api_key');
    assert.equal((await use(bare.json.key as string)).status, 200);
  });

  test('allowed-ips: a request from elsewhere is 403 ip_not_allowed naming its address, never the list; set, changed and removed at once', async () => {
    const { key, token } = await create({ name: 'fenced', allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] });
    assert.deepEqual(token.allowed_ips, ['10.0.0.0/8', '2001:db8::/32']);
    const out = await use(key);
    refused(out, 403, 'ip_not_allowed');
    assert.match(out.json.error.message, /127\.0\.0\.1/);
    assert.doesNotMatch(out.text, /10\.0\.0\.0|2001:db8/, 'the list is never said');
    const set = await admin('POST', '/admin/tokens/fenced/allowed-ips', { allowed_ips: ['203.0.113.0/24', '127.0.0.1'] });
    assert.deepEqual(set.json.allowed_ips, ['203.0.113.0/24', '127.0.0.1']);
    assert.equal((await use(key)).status, 200, 'at once on this replica');
    await admin('POST', '/admin/tokens/fenced/allowed-ips', { allowed_ips: ['::1'] });
    refused(await use(key), 403, 'ip_not_allowed');
    assert.equal((await admin('POST', '/admin/tokens/fenced/allowed-ips', { allowed_ips: null })).json.allowed_ips, null);
    assert.equal((await use(key)).status, 200, 'anywhere again');
    const bad = await admin('POST', '/admin/tokens/fenced/allowed-ips', { allowed_ips: ['10.0.0.1', '10.0.0.0/33'] });
    refused(bad, 400, 'invalid_request', 'allowed_ips');
    assert.match(bad.json.error.message, /"10\.0\.0\.0\/33" is not an IPv4 or IPv6 address or CIDR block/);
    for (const body of [
      { allowed_ips: [] },
      { allowed_ips: Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`) },
      { allowed_ips: ['example.com'] },
      { allowed_ips: '10.0.0.0/8' },
      {},
    ]) {
      refused(await admin('POST', `/admin/tokens/${token.id}/allowed-ips`, body), 400, 'invalid_request', 'allowed_ips');
    }
    refused(await admin('POST', '/admin/tokens', { group: 'default', allowed_ips: ['300.0.0.1'] }), 400, 'invalid_request', 'allowed_ips');
    const records = await audit('token.allowed_ips', token.id);
    // The test's clock stands still: the records share their time, so their order is not asserted.
    assert.deepEqual(records.map((r) => JSON.stringify(r.after.allowed_ips)).sort(), ['["203.0.113.0/24","127.0.0.1"]', '["::1"]', 'null']);
  });

  test('GET /admin/tokens shows last_used_at once the batch is written; never before a use', async () => {
    const { key, token } = await create({ name: 'used' });
    const listed = async () => ((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).find((t) => t.id === token.id);
    assert.equal((await listed())?.last_used_at, null);
    assert.equal((await use(key)).status, 200);
    await h.gateway.lastUsed.flush(false);
    assert.equal((await listed())?.last_used_at, new Date(now).toISOString());
  });
});

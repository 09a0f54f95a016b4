/**
 * The token admin routes (docs/operating.md, "Operating: admin routes and metrics") over real HTTP: a gateway
 * on port 0 in front of the alpha simulator, the admin key, and what a token's key can then do on
 * a real route (the shipped price of an alpha 1K image is 1 unit).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashKey } from '../../src/tokens/keys.js';
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { postJson, readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';

const ADMIN_KEY = 'admin-tokens-test-admin-key';
const IMAGE = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const generate = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
};

describe('admin routes for tokens', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ adminKey: ADMIN_KEY });
  });
  after(() => h.close());

  /** An admin call; a body that is a string is sent as it is, anything else as JSON. */
  const admin = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> =>
    readAnswer(
      await fetch(h.url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );
  const image = (key: string) => postJson(h.url, IMAGE, generate, { authorization: `Bearer ${key}` });
  const create = async (body: Record<string, unknown>) => {
    const r = await admin('POST', '/admin/tokens', body);
    assert.equal(r.status, 201, r.text);
    return r.json as { key: string; token: TokenView };
  };
  /** Shape A of an error answer, with its code and the field it names. */
  const refused = (r: JsonAnswer, status: number, code: string, param = '') => {
    assert.equal(r.status, status, r.text);
    assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message', 'param', 'type']);
    assert.deepEqual([r.json.error.code, r.json.error.param], [code, param], r.text);
  };

  test('create: the key is answered once and works on a real route; list and get never show a key or its hash', async () => {
    const { key, token } = await create({ group: 'default', quota: 5, name: 'api', models: ['alpha-3-pro-image-preview'] });
    assert.match(key, /^gw-[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      { ...token, id: '', created_at: 0 },
      {
        id: '',
        name: 'api',
        group: 'default',
        models: ['alpha-3-pro-image-preview'],
        quota: 5,
        used: 0,
        disabled: false,
        created_at: 0,
        rpm_limit: null,
        max_parallel: null,
        expires_at: null,
        quota_remaining: 5,
        budget: null,
        budget_period: null,
        budget_used: null,
        budget_remaining: null,
        budget_resets_at: null,
        previous_key_expires_at: null,
        last_used_at: null,
        allowed_ips: null,
      },
    );
    assert.equal((await image(key)).status, 200);
    const listed = await admin('GET', '/admin/tokens');
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (listed.json.tokens as TokenView[]).find((t) => t.id === token.id),
      { ...token, used: 1, quota_remaining: 4 },
    );
    const one = await admin('GET', `/admin/tokens/${token.id}`);
    assert.deepEqual(one.json, { ...token, used: 1, quota_remaining: 4 });
    for (const r of [listed, one]) assert.ok(!r.text.includes(key.slice(3)) && !r.text.includes(hashKey(key)), 'no key, no hash');
    const unlimited = await create({ group: 'default' });
    assert.match(unlimited.token.name, /^admin-[0-9a-f]{8}$/, 'a name of its own by default: names are unique');
    assert.deepEqual([unlimited.token.quota, unlimited.token.models], [null, null], 'the defaults');
  });

  test('quota: a new quota holds from the next request; null is unlimited; what was used stays used', async () => {
    const { key, token } = await create({ group: 'default', quota: 1 });
    assert.equal((await image(key)).status, 200);
    refused(await image(key), 402, 'insufficient_user_quota');
    const raised = await admin('POST', `/admin/tokens/${token.id}/quota`, { quota: 2 });
    assert.equal(raised.status, 200, raised.text);
    assert.deepEqual([raised.json.quota, raised.json.used], [2, 1]);
    assert.equal((await image(key)).status, 200);
    refused(await image(key), 402, 'insufficient_user_quota');
    assert.equal((await admin('POST', `/admin/tokens/${token.id}/quota`, { quota: null })).json.quota, null);
    assert.equal((await image(key)).status, 200);
    assert.equal((await admin('POST', `/admin/tokens/${token.id}/quota`, { quota: 0 })).json.used, 3);
    refused(await image(key), 402, 'insufficient_user_quota');
  });

  test('limits: set at creation, changed by POST …/limits (one left out stays, null removes it), and they hold from the next request', async () => {
    const { key, token } = await create({ group: 'default', rpm_limit: 1, max_parallel: 4 });
    assert.deepEqual([token.rpm_limit, token.max_parallel], [1, 4]);
    assert.equal((await image(key)).status, 200);
    const over = await image(key);
    assert.equal(over.status, 429, over.text);
    assert.equal(over.json.code, 'too_many_requests');
    const raised = await admin('POST', `/admin/tokens/${token.id}/limits`, { rpm_limit: 5 });
    assert.equal(raised.status, 200, raised.text);
    assert.deepEqual([raised.json.rpm_limit, raised.json.max_parallel], [5, 4], 'max_parallel was left as it was');
    const next = await image(key);
    assert.equal(next.status, 200, 'the cached key was forgotten: the new limit holds at once');
    assert.equal(next.headers.get('x-ratelimit-limit-requests'), '5');
    const none = await admin('POST', `/admin/tokens/${token.id}/limits`, { rpm_limit: null, max_parallel: null });
    assert.deepEqual([none.json.rpm_limit, none.json.max_parallel], [null, null]);
    const free = await image(key);
    assert.equal(free.status, 200);
    assert.equal(free.headers.get('x-ratelimit-limit-requests'), null, 'no limit, no headers');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.rpm_limit, null);
  });

  test('expiry: set at creation (ISO with a zone, shown in UTC), moved, ended now by a past time, removed by null; each change audited', async () => {
    const { key, token } = await create({ group: 'default', expires_at: '2099-01-31T02:30:00+02:00' });
    assert.equal(token.expires_at, '2099-01-31T00:30:00.000Z');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.expires_at, '2099-01-31T00:30:00.000Z');
    assert.equal((await image(key)).status, 200, 'its lookup is now cached');
    const ended = await admin('POST', `/admin/tokens/${token.id}/expiry`, { expires_at: '2020-01-01T00:00:00Z' });
    assert.equal(ended.status, 200, ended.text);
    assert.equal(ended.json.expires_at, '2020-01-01T00:00:00.000Z');
    const refusedNow = await image(key);
    refused(refusedNow, 401, 'invalid_api_key');
    assert.match(refusedNow.json.error.message, /the API key expired at 2020-01-01T00:00:00\.000Z/);
    const never = await admin('POST', `/admin/tokens/${token.id}/expiry`, { expires_at: null });
    assert.deepEqual([never.status, never.json.expires_at], [200, null]);
    assert.equal((await image(key)).status, 200, 'the cached key was forgotten: it works again at once');
    const listed = (await admin('GET', '/admin/tokens')).json.tokens as TokenView[];
    assert.equal(listed.find((t) => t.id === token.id)?.expires_at, null);
    const audit = (await admin('GET', `/admin/audit?target=${token.id}&action=token.expiry`)).json.audit as { before: TokenView; after: TokenView }[];
    assert.deepEqual(
      audit.map((a) => [a.before.expires_at, a.after.expires_at]),
      [
        ['2020-01-01T00:00:00.000Z', null],
        ['2099-01-31T00:30:00.000Z', '2020-01-01T00:00:00.000Z'],
      ],
      'newest first, before and after',
    );
  });

  test('disable: the next request is refused at once (the cached key is forgotten); enable: it works again', async () => {
    const { key, token } = await create({ group: 'default' });
    assert.equal((await image(key)).status, 200, 'its lookup is now cached');
    const disabled = await admin('POST', `/admin/tokens/${token.id}/disable`);
    assert.deepEqual([disabled.status, disabled.json.disabled], [200, true]);
    refused(await image(key), 401, 'invalid_api_key');
    const enabled = await admin('POST', `/admin/tokens/${token.id}/enable`);
    assert.deepEqual([enabled.status, enabled.json.disabled], [200, false]);
    assert.equal((await image(key)).status, 200);
  });

  test('delete: refused while the token has a task running; then the token and its key are gone', async () => {
    const { key, token } = await create({ group: 'default' });
    assert.equal((await image(key)).status, 200);
    const task = await h.store.createTask({
      id: 'task_admin_delete',
      tokenId: token.id,
      kind: 'video',
      route: 'r',
      model: 'm',
      upstreamModel: 'm',
      channel: 'c',
      price: 1,
      createdAt: Date.now(),
      deadlineAt: Date.now() + 60_000,
    });
    assert.ok(task);
    const busy = await admin('DELETE', `/admin/tokens/${token.id}`);
    refused(busy, 409, 'token_in_use');
    assert.match(busy.json.error.message, /still has 1 unfinished task\(s\)/);
    assert.equal((await image(key)).status, 200, 'a token that was not deleted still works');
    await h.store.updateTask(task.id, task.version, { status: 'failed', refund: true });

    const deleted = await admin('DELETE', `/admin/tokens/${token.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.json, { deleted: true, token: { ...token, used: 2 } });
    refused(await image(key), 401, 'invalid_api_key');
    refused(await admin('GET', `/admin/tokens/${token.id}`), 404, 'not_found');
    refused(await admin('DELETE', `/admin/tokens/${token.id}`), 404, 'not_found');
    assert.ok(!((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).some((t) => t.id === token.id));
    const ledger = await admin('GET', `/admin/tokens/${token.id}/ledger`);
    refused(ledger, 404, 'not_found');
  });

  test('a bad body is 400 invalid_request naming the field (415, 413 for the wrong type or size), and creates nothing', async () => {
    const before = ((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).length;
    const { token } = await create({ group: 'default' });
    const cases: [string, unknown, string][] = [
      ['/admin/tokens', {}, 'group'],
      ['/admin/tokens', { group: 'nope' }, 'group'],
      ['/admin/tokens', { group: '' }, 'group'],
      ['/admin/tokens', { group: 7 }, 'group'],
      ['/admin/tokens', { group: 'default', quota: -1 }, 'quota'],
      ['/admin/tokens', { group: 'default', quota: 1.5 }, 'quota'],
      ['/admin/tokens', { group: 'default', quota: '5' }, 'quota'],
      ['/admin/tokens', { group: 'default', quota: 1e300 }, 'quota'],
      ['/admin/tokens', { group: 'default', models: 'a,b' }, 'models'],
      ['/admin/tokens', { group: 'default', models: ['a', 1] }, 'models[1]'],
      ['/admin/tokens', { group: 'default', name: '' }, 'name'],
      ['/admin/tokens', { group: 'default', key: 'gw-mine' }, 'key'],
      ['/admin/tokens', [{ group: 'default' }], ''],
      ['/admin/tokens', '{"group": "default"', ''],
      ['/admin/tokens', '', ''],
      [`/admin/tokens/${token.id}/quota`, {}, 'quota'],
      [`/admin/tokens/${token.id}/quota`, { quota: 'unlimited' }, 'quota'],
      [`/admin/tokens/${token.id}/quota`, { quota: -3 }, 'quota'],
      [`/admin/tokens/${token.id}/quota`, { quota: 3, disabled: true }, 'disabled'],
      [`/admin/tokens/${token.id}/quota`, 'null', ''],
      ['/admin/tokens', { group: 'default', rpm_limit: 0 }, 'rpm_limit'],
      ['/admin/tokens', { group: 'default', rpm_limit: 1.5 }, 'rpm_limit'],
      ['/admin/tokens', { group: 'default', rpm_limit: '60' }, 'rpm_limit'],
      ['/admin/tokens', { group: 'default', rpm_limit: 10_000_000 }, 'rpm_limit'],
      ['/admin/tokens', { group: 'default', max_parallel: -1 }, 'max_parallel'],
      [`/admin/tokens/${token.id}/limits`, { rpm_limit: 0 }, 'rpm_limit'],
      [`/admin/tokens/${token.id}/limits`, { max_parallel: 'unlimited' }, 'max_parallel'],
      [`/admin/tokens/${token.id}/limits`, { rpm: 5 }, 'rpm'],
      ['/admin/tokens', { group: 'default', expires_at: '2099-01-31T00:00:00' }, 'expires_at'],
      ['/admin/tokens', { group: 'default', expires_at: '2099-02-30T00:00:00Z' }, 'expires_at'],
      ['/admin/tokens', { group: 'default', expires_at: '30d' }, 'expires_at'],
      ['/admin/tokens', { group: 'default', expires_at: 4102444800000 }, 'expires_at'],
      ['/admin/tokens', { group: 'default', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [`/admin/tokens/${token.id}/expiry`, {}, 'expires_at'],
      [`/admin/tokens/${token.id}/expiry`, { expires_at: 'never' }, 'expires_at'],
      [`/admin/tokens/${token.id}/expiry`, { expires_at: '2099-01-31' }, 'expires_at'],
      [`/admin/tokens/${token.id}/expiry`, { expires_at: null, quota: 1 }, 'quota'],
    ];
    for (const [path, body, param] of cases) refused(await admin('POST', path, body), 400, 'invalid_request', param);
    refused(await admin('POST', '/admin/tokens', 'group=default', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    refused(await admin('POST', '/admin/tokens', { group: 'default', name: 'x'.repeat(100 * 1024) }), 413, 'payload_too_large');
    assert.equal(((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).length, before + 1, 'only the first one was created');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.quota, null, 'no quota was set');
    const empty = await admin('POST', `/admin/tokens/${token.id}/limits`, {});
    assert.equal(empty.status, 400, 'a change of no limit');
    assert.equal(empty.json.error.code, 'invalid_request');
    assert.deepEqual([(await admin('GET', `/admin/tokens/${token.id}`)).json.rpm_limit], [null], 'no limit was set');
    assert.equal((await admin('GET', `/admin/tokens/${token.id}`)).json.expires_at, null, 'no expiry was set');
  });

  test('an unknown id is 404 on every token route', async () => {
    for (const [method, path, body] of [
      ['GET', '/admin/tokens/no-such-token'],
      ['DELETE', '/admin/tokens/no-such-token'],
      ['POST', '/admin/tokens/no-such-token/disable'],
      ['POST', '/admin/tokens/no-such-token/enable'],
      ['POST', '/admin/tokens/no-such-token/quota', { quota: 1 }],
      ['POST', '/admin/tokens/no-such-token/limits', { rpm_limit: 1 }],
      ['POST', '/admin/tokens/no-such-token/expiry', { expires_at: null }],
    ] as [string, string, unknown?][]) {
      const r = await admin(method, path, body);
      refused(r, 404, 'not_found');
      assert.match(r.json.error.message, /no token named "no-such-token"/);
    }
  });

  test('without the admin key nothing is said; a method the path does not have is 405 with Allow', async () => {
    const key = (await create({ group: 'default' })).key;
    for (const auth of [`Bearer ${key}`, 'Bearer wrong', '']) {
      refused(await admin('POST', '/admin/tokens', { group: 'default' }, { authorization: auth }), 401, 'invalid_api_key');
      refused(await admin('GET', '/admin/tokens', undefined, { authorization: auth }), 401, 'invalid_api_key');
    }
    const put = await admin('PUT', '/admin/tokens/some-id', { quota: 1 });
    refused(put, 405, 'method_not_allowed');
    assert.equal(put.headers.get('allow'), 'GET, DELETE');
  });
});

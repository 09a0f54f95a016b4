/**
 * A token's budget per period through the admin routes (docs/tokens-and-quota.md, "Budgets"):
 * `budget` and `budget_period` in `POST /admin/tokens`, `POST /admin/tokens/{id}/budget`, what
 * `GET /admin/tokens` shows of it, and what a key with a spent budget is answered on a real route
 * (the shipped price of an alpha 1K image is 1 unit). Real HTTP to a gateway on port 0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TokenView } from '../../src/tokens/manage-tokens.js';
import { postJson, readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';

const ADMIN_KEY = 'admin-budget-test-admin-key';
const IMAGE = '/v1beta/models/alpha-3-pro-image-preview:generateContent';
const generate = {
  contents: [{ role: 'user', parts: [{ text: 'a lighthouse at dawn' }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
};
const DAY = 86_400_000;

describe('admin routes for budgets', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ adminKey: ADMIN_KEY });
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
  const image = (key: string) => postJson(h.url, IMAGE, generate, { authorization: `Bearer ${key}` });
  const create = async (body: Record<string, unknown>) => {
    const r = await admin('POST', '/admin/tokens', body);
    assert.equal(r.status, 201, r.text);
    return r.json as { key: string; token: TokenView };
  };
  const refused = (r: JsonAnswer, status: number, code: string, param = '') => {
    assert.equal(r.status, status, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param], [code, param], r.text);
  };

  test('created with a budget, listed with what it used, what is left and when it renews; a spent budget is 402 naming it', async () => {
    const { key, token } = await create({ group: 'default', quota: 50, budget: 2, budget_period: 'month' });
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    assert.deepEqual(
      [token.budget, token.budget_period, token.budget_used, token.budget_remaining, token.budget_resets_at, token.quota_remaining],
      [2, 'month', 0, 2, nextMonth, 50],
    );
    assert.equal((await image(key)).status, 200);
    assert.equal((await image(key)).status, 200);
    const spent = await image(key);
    refused(spent, 402, 'insufficient_user_quota');
    assert.equal(spent.json.error.message, `this key's monthly budget of 2 units has 0 left, the request costs 1; it renews at ${nextMonth}`);
    const listed = ((await admin('GET', '/admin/tokens')).json.tokens as TokenView[]).find((t) => t.id === token.id);
    assert.deepEqual(
      [listed?.used, listed?.quota_remaining, listed?.budget_used, listed?.budget_remaining, listed?.budget_resets_at],
      [2, 48, 2, 0, nextMonth],
    );
    const plain = await create({ group: 'default' });
    assert.deepEqual(
      [
        plain.token.budget,
        plain.token.budget_period,
        plain.token.budget_used,
        plain.token.budget_remaining,
        plain.token.budget_resets_at,
        plain.token.quota_remaining,
      ],
      [null, null, null, null, null, null],
      'no budget, unlimited quota',
    );
  });

  test('POST …/budget: the amount alone keeps the period and its use; a new period starts from 0; null removes it; each change audited', async () => {
    const { key, token } = await create({ group: 'default', budget: 1, budget_period: 'day' });
    assert.equal((await image(key)).status, 200);
    assert.equal((await image(key)).status, 402, 'its lookup is cached and its budget spent');
    const raised = await admin('POST', `/admin/tokens/${token.id}/budget`, { budget: 3 });
    assert.equal(raised.status, 200, raised.text);
    assert.deepEqual([raised.json.budget, raised.json.budget_period, raised.json.budget_used, raised.json.budget_remaining], [3, 'day', 1, 2]);
    assert.equal((await image(key)).status, 200, 'the raised budget holds from the next request');
    const weekly = await admin('POST', `/admin/tokens/${token.id}/budget`, { budget: 5, budget_period: '14d' });
    assert.deepEqual([weekly.json.budget, weekly.json.budget_period, weekly.json.budget_used], [5, '14d', 0]);
    const resets = Date.parse(weekly.json.budget_resets_at);
    assert.ok(Math.abs(resets - (Date.now() + 14 * DAY)) < 60_000, `14 days from now: ${weekly.json.budget_resets_at}`);
    const removed = await admin('POST', `/admin/tokens/${token.id}/budget`, { budget: null });
    assert.deepEqual([removed.json.budget, removed.json.budget_period, removed.json.budget_resets_at], [null, null, null]);
    const audit = (await admin('GET', `/admin/audit?target=${token.id}&action=token.budget`)).json.audit as { before: TokenView; after: TokenView }[];
    assert.deepEqual(
      audit.map((a) => [a.before.budget, a.after.budget, a.after.budget_period]),
      [
        [5, null, null],
        [3, 5, '14d'],
        [1, 3, 'day'],
      ],
      'newest first',
    );
  });

  test('a bad budget or period is 400 invalid_request naming it, and changes nothing; an unknown token is 404', async () => {
    const { token } = await create({ group: 'default' });
    const cases: [string, unknown, string][] = [
      ['/admin/tokens', { group: 'default', budget: 5 }, 'budget_period'],
      ['/admin/tokens', { group: 'default', budget_period: 'day' }, 'budget'],
      ['/admin/tokens', { group: 'default', budget: -1, budget_period: 'day' }, 'budget'],
      ['/admin/tokens', { group: 'default', budget: 1.5, budget_period: 'day' }, 'budget'],
      ['/admin/tokens', { group: 'default', budget: '5', budget_period: 'day' }, 'budget'],
      ['/admin/tokens', { group: 'default', budget: 5, budget_period: 'year' }, 'budget_period'],
      ['/admin/tokens', { group: 'default', budget: 5, budget_period: '0d' }, 'budget_period'],
      ['/admin/tokens', { group: 'default', budget: 5, budget_period: '367d' }, 'budget_period'],
      ['/admin/tokens', { group: 'default', budget: 5, budget_period: 7 }, 'budget_period'],
      [`/admin/tokens/${token.id}/budget`, {}, 'budget'],
      [`/admin/tokens/${token.id}/budget`, { budget: 5 }, 'budget_period'],
      [`/admin/tokens/${token.id}/budget`, { budget: 5, budget_period: 'Day' }, 'budget_period'],
      [`/admin/tokens/${token.id}/budget`, { budget: null, budget_period: 'day' }, 'budget'],
      [`/admin/tokens/${token.id}/budget`, { budget: 5, budget_period: 'day', quota: 1 }, 'quota'],
    ];
    for (const [path, body, param] of cases) refused(await admin('POST', path, body), 400, 'invalid_request', param);
    const period = await admin('POST', '/admin/tokens', { group: 'default', budget: 5, budget_period: 'fortnight' });
    assert.match(period.json.error.message, /budget_period must be day, week, month, or a number of days from 1 to 366/);
    const after = (await admin('GET', `/admin/tokens/${token.id}`)).json as TokenView;
    assert.deepEqual([after.budget, after.budget_period], [null, null], 'nothing changed');
    const unknown = await admin('POST', '/admin/tokens/no-such-token/budget', { budget: 5, budget_period: 'day' });
    refused(unknown, 404, 'not_found');
  });
});

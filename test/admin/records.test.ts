/**
 * The request log and the audit log over real HTTP (docs/admin-and-metrics.md, "The request log",
 * "The audit log"): a gateway on port 0 in front of the alpha simulator, requests that succeed and
 * fail, their records read back through GET /admin/requests with each filter and in pages, records
 * purged by age when the gateway's clock moves on, bad filters refused 400, and the admin routes'
 * token changes in GET /admin/audit.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hashKey } from '../../src/tokens/keys.js';
import { postJson, readAnswer, startHarness, type Harness, type JsonAnswer } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const ADMIN_KEY = 'records-test-admin-key';
const MODEL = 'alpha-3-pro-image-preview';
const PATH = `/v1beta/models/${MODEL}:generateContent`;
const DAY = 86_400_000;
const image = (prompt = 'a lighthouse at dawn') => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '1K' } },
});

interface RequestView {
  id: string;
  at: number;
  request_id: string;
  token_id: string | null;
  route: string;
  model: string | null;
  channel: string | null;
  status: number;
  error: string | null;
  ms: number;
  units: number | null;
  task_id: string | null;
}

describe('the request log and the audit log over HTTP', () => {
  let h: Harness;
  let tokenId: string;
  let tokenName: string;
  /** The gateway's clock runs this far ahead of the system's (the purge's test moves it). */
  let offset = 0;
  const admin = async (path: string, init: RequestInit = {}): Promise<JsonAnswer> =>
    readAnswer(await fetch(h.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', ...init.headers } }));
  const requests = async (query = ''): Promise<RequestView[]> => {
    const r = await admin(`/admin/requests${query}`);
    assert.equal(r.status, 200, r.text);
    return r.json.requests as RequestView[];
  };
  const refused = (r: JsonAnswer, param: string) => {
    assert.equal(r.status, 400, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param], ['invalid_request', param], r.text);
  };

  before(async () => {
    h = await startHarness({
      adminKey: ADMIN_KEY,
      records: { requestLog: { days: 7, flushMs: 20, sweepMs: 50 }, audit: { days: 30, sweepMs: 50 }, clock: () => new Date(Date.now() + offset) },
    });
    const token = (await h.store.listTokens()).find((t) => t.keyHash === hashKey(h.key))!;
    tokenId = token.id;
    tokenName = token.name;
  });
  after(() => h.close());

  test('a request that succeeds and ones that fail each leave one record, with what they charged and why they failed', async () => {
    const auth = { authorization: `Bearer ${h.key}` };
    const ok = await postJson(h.url, PATH, image(), { ...auth, 'x-request-id': 'client-ok-1' });
    assert.equal(ok.status, 200, ok.text);
    const vendorRefused = await postJson(h.url, PATH, image('x [sim:fault=400]'), { ...auth, 'x-request-id': 'client-bad-1' });
    assert.equal(vendorRefused.status, 400);
    const noKey = await postJson(h.url, PATH, image(), { authorization: 'Bearer sk-nobody', 'x-request-id': 'client-nokey-1' });
    assert.equal(noKey.status, 401);
    // Operator routes and unknown paths are no public request.
    await admin('/admin/tokens');
    await fetch(`${h.url}/v1/nothing-here`);
    const rows = await until('three records', async () => {
      const r = await requests();
      return r.length >= 3 && r;
    });
    assert.equal(rows.length, 3, 'one per public request, none for /admin or an unmatched path');
    const [nokey, bad, good] = rows;
    assert.deepEqual(
      { ...good, id: undefined, at: undefined, ms: undefined },
      {
        id: undefined,
        at: undefined,
        ms: undefined,
        request_id: 'client-ok-1',
        token_id: tokenId,
        token_name: tokenName,
        route: good!.route,
        model: MODEL,
        channel: good!.channel,
        status: 200,
        error: null,
        units: 1,
        task_id: null,
      },
    );
    assert.ok(good!.channel, 'the channel that served');
    assert.ok(good!.route.length > 0 && good!.ms >= 0);
    assert.deepEqual([bad!.request_id, bad!.status, bad!.error, bad!.units, bad!.token_id], ['client-bad-1', 400, bad!.error, null, tokenId]);
    assert.ok(bad!.error && bad!.error.length > 0, 'the error code of the vendor refusal');
    assert.deepEqual(
      [nokey!.request_id, nokey!.status, nokey!.error, nokey!.token_id, nokey!.model],
      ['client-nokey-1', 401, 'invalid_api_key', null, null],
      'refused before its model was read',
    );
    assert.ok(good!.at <= bad!.at && bad!.at <= nokey!.at, 'newest first');
  });

  test('each filter narrows the log', async () => {
    const ids = async (q: string) => (await requests(q)).map((r) => r.request_id);
    assert.deepEqual(await ids('?status=401'), ['client-nokey-1']);
    assert.deepEqual(await ids('?error=invalid_api_key'), ['client-nokey-1']);
    assert.deepEqual(await ids(`?token=${tokenId}`), ['client-bad-1', 'client-ok-1']);
    assert.deepEqual(await ids(`?token=${tokenId}&status=200`), ['client-ok-1']);
    assert.deepEqual(await ids(`?model=${MODEL}&request_id=client-bad-1`), ['client-bad-1']);
    assert.deepEqual(await ids('?model=other-model'), []);
    const all = await requests();
    const route = all[0]!.route;
    assert.equal((await ids(`?route=${encodeURIComponent(route)}`)).length, 3);
    const newest = all[0]!.at;
    assert.deepEqual(await ids(`?from=${newest + 1}`), [], 'from is inclusive of at, nothing after the newest');
    assert.ok((await ids(`?to=${newest + 1}`)).includes('client-nokey-1'));
    assert.deepEqual(await ids(`?to=${all.at(-1)!.at}`), [], 'to is exclusive');
    assert.equal(
      (await ids(`?from=${new Date(newest - DAY).toISOString()}&to=${new Date(newest + DAY).toISOString().slice(0, 10)}`)).length,
      3,
      'ISO times and dates',
    );
  });

  test('pages follow the cursor to the end, each record once, and records written meanwhile do not shift them', async () => {
    const auth = { authorization: `Bearer ${h.key}` };
    for (let i = 0; i < 5; i++) assert.equal((await postJson(h.url, PATH, image(), { ...auth, 'x-request-id': `page-${i}` })).status, 200);
    await until('eight records', async () => (await requests()).length === 8);
    const everything = (await requests()).map((r) => r.id);
    const seen: string[] = [];
    let before = '';
    let pages = 0;
    for (;;) {
      const r = await admin(`/admin/requests?limit=3${before ? `&before=${before}` : ''}`);
      assert.equal(r.status, 200, r.text);
      seen.push(...(r.json.requests as RequestView[]).map((x) => x.id));
      pages++;
      if (pages === 1) {
        // A new request after the first page: it is newer than every position, so no page moves.
        assert.equal((await postJson(h.url, PATH, image(), { ...auth, 'x-request-id': 'late' })).status, 200);
        await until('the late record', async () => (await requests('?request_id=late')).length === 1);
      }
      if (r.json.next === null) break;
      before = r.json.next as string;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, everything, 'every record once, in order');
  });

  test('bad filters are 400 invalid_request naming the parameter', async () => {
    refused(await admin('/admin/requests?status=abc'), 'status');
    refused(await admin('/admin/requests?status=99'), 'status');
    refused(await admin('/admin/requests?limit=0'), 'limit');
    refused(await admin('/admin/requests?limit=501'), 'limit');
    refused(await admin('/admin/requests?from=yesterday'), 'from');
    refused(await admin('/admin/requests?to=2026-02-30'), 'to');
    refused(await admin('/admin/requests?from=2000&to=1000'), 'to');
    refused(await admin('/admin/requests?before=not*a*cursor'), 'before');
    refused(await admin(`/admin/requests?before=${Buffer.from('{"a":1}').toString('base64url')}`), 'before');
    refused(await admin(`/admin/requests?model=${'m'.repeat(201)}`), 'model');
    refused(await admin('/admin/audit?from=soon'), 'from');
    refused(await admin('/admin/audit?limit=-1'), 'limit');
    const noKey = await readAnswer(await fetch(`${h.url}/admin/requests`));
    assert.equal(noKey.status, 401, 'the admin key is needed');
  });

  test("the admin routes' token changes are in the audit log: who, what, before and after, never a key", async () => {
    const actor = `admin:${createHash('sha256').update(ADMIN_KEY).digest('hex').slice(0, 12)}`;
    const created = await admin('/admin/tokens', { method: 'POST', body: JSON.stringify({ group: 'default', name: 'audited', quota: 10 }) });
    assert.equal(created.status, 201, created.text);
    const id = created.json.token.id as string;
    assert.equal((await admin(`/admin/tokens/${id}/quota`, { method: 'POST', body: JSON.stringify({ quota: 25 }) })).status, 200);
    assert.equal((await admin(`/admin/tokens/${id}/limits`, { method: 'POST', body: JSON.stringify({ rpm_limit: 60 }) })).status, 200);
    assert.equal((await admin(`/admin/tokens/${id}/disable`, { method: 'POST' })).status, 200);
    assert.equal((await admin(`/admin/tokens/${id}/enable`, { method: 'POST' })).status, 200);
    assert.equal((await admin('/admin/tokens/no-such-token/disable', { method: 'POST' })).status, 404);
    assert.equal((await admin(`/admin/tokens/${id}`, { method: 'DELETE' })).status, 200);
    const r = await admin(`/admin/audit?target=${id}`);
    assert.equal(r.status, 200, r.text);
    const audit = r.json.audit as {
      actor: string;
      action: string;
      target: string;
      before: Record<string, unknown> | null;
      after: Record<string, unknown> | null;
    }[];
    assert.deepEqual(
      audit.map((a) => a.action),
      ['token.delete', 'token.enable', 'token.disable', 'token.limits', 'token.quota', 'token.create'],
    );
    assert.ok(audit.every((a) => a.actor === actor && a.target === id));
    const byAction = new Map(audit.map((a) => [a.action, a]));
    assert.deepEqual([byAction.get('token.create')!.before, byAction.get('token.create')!.after?.quota], [null, 10]);
    assert.deepEqual([byAction.get('token.quota')!.before?.quota, byAction.get('token.quota')!.after?.quota], [10, 25]);
    assert.deepEqual([byAction.get('token.limits')!.before?.rpm_limit, byAction.get('token.limits')!.after?.rpm_limit], [null, 60]);
    assert.deepEqual([byAction.get('token.disable')!.before?.disabled, byAction.get('token.disable')!.after?.disabled], [false, true]);
    assert.deepEqual([byAction.get('token.delete')!.before?.id, byAction.get('token.delete')!.after], [id, null]);
    // Never the key nor its hash.
    const key = created.json.key as string;
    assert.ok(!r.text.includes(key) && !r.text.includes(hashKey(key)) && !r.text.includes('key_hash') && !r.text.includes('keyHash'), r.text);
    // Filters and pages.
    assert.deepEqual(
      ((await admin(`/admin/audit?action=token.quota&actor=${actor}`)).json.audit as { target: string }[]).map((a) => a.target),
      [id],
    );
    const first = await admin('/admin/audit?limit=2');
    assert.equal((first.json.audit as unknown[]).length, 2);
    const second = await admin(`/admin/audit?limit=10&before=${first.json.next}`);
    assert.deepEqual(
      (second.json.audit as { action: string }[]).map((a) => a.action),
      ['token.disable', 'token.limits', 'token.quota', 'token.create'],
    );
    assert.equal(second.json.next, null);
  });

  test('records older than GATEWAY_REQUEST_LOG_DAYS are purged when the clock passes them; newer ones stay', async () => {
    const before = (await requests('?limit=500')).length;
    assert.ok(before >= 9);
    // Six days on: a new request, and nothing is old enough yet.
    offset = 6 * DAY;
    assert.equal((await postJson(h.url, PATH, image(), { authorization: `Bearer ${h.key}`, 'x-request-id': 'six-days-on' })).status, 200);
    await until('the record of six days on', async () => (await requests('?request_id=six-days-on')).length === 1);
    // Eight days on: the first requests are past 7 days and go; the one of six days on stays.
    offset = 8 * DAY;
    const left = await until('the purge', async () => {
      const r = await requests('?limit=500');
      return r.length === 1 && r;
    });
    assert.equal(left[0]!.request_id, 'six-days-on');
  });

  test('audit records older than GATEWAY_AUDIT_DAYS are purged when the clock passes them; newer ones stay', async () => {
    const audit = async () => {
      const r = await admin('/admin/audit?limit=500');
      assert.equal(r.status, 200, r.text);
      return r.json.audit as { action: string; at: number }[];
    };
    const before = await audit();
    assert.ok(before.length >= 4, 'the token changes of the tests above');
    // 29 days past the first records (at 8 days on already): a new one, and nothing old enough yet.
    offset = 29 * DAY;
    const made = await admin('/admin/tokens', { method: 'POST', body: JSON.stringify({ group: 'default', name: 'late' }) });
    assert.equal(made.status, 201, made.text);
    assert.equal((await audit()).length, before.length + 1);
    // 31 days on: every record of the first days is past 30 days and goes; the late one stays.
    offset = 31 * DAY;
    const left = await until('the audit purge', async () => {
      const r = await audit();
      return r.length === 1 && r;
    });
    assert.equal(left[0]!.action, 'token.create');
  });
});

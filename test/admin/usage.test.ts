/**
 * The usage admin routes (docs/operating.md, "Operating: admin routes and metrics") over real HTTP: a gateway
 * on port 0 in front of every simulator, two tokens making priced requests (alpha images: 1 unit at
 * 1K, 2 at 2K; epsilon-video-3 tasks of 12 s at 1792x1024: 3 units), some of them refunded, and the
 * figures of /admin/usage and /admin/usage.csv checked against the ledger the store wrote.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LedgerEntry } from '../../src/store/store.js';
import { generateKey, hashKey } from '../../src/tokens/keys.js';
import { readAnswer, type JsonAnswer } from '../helpers/harness.js';
import { startTaskHarness, type TaskHarness } from '../helpers/task-harness.js';

const ADMIN_KEY = 'admin-usage-test-admin-key';
const DAY = 86_400_000;
const IMAGE_MODEL = 'alpha-3-pro-image-preview';
const VIDEO_MODEL = 'epsilon-video-3';
/** Names a CSV must quote (comma, quote, newline) and guard (a formula). */
const NAME_A = 'Acme, "R&D"\nteam';
const NAME_B = '=HYPERLINK("http://evil.example","x")';

const image = (size: string, prompt = 'a lighthouse at dawn') => ({
  contents: [{ role: 'user', parts: [{ text: prompt }] }],
  generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: size } },
});
const video = (prompt: string) => ({ model: VIDEO_MODEL, prompt, seconds: '12', size: '1792x1024' });

interface Figures {
  requests: number;
  charged: number;
  refunded: number;
  settled: number;
}

/** The figures of some ledger rows, as docs/tokens-and-quota.md defines them. */
function figuresOf(rows: readonly LedgerEntry[]): Figures {
  const f = { requests: 0, charged: 0, refunded: 0, settled: 0 };
  for (const r of rows) {
    if (r.kind === 'debit') (f.requests += 1), (f.charged += r.amount);
    if (r.kind === 'refund') (f.requests -= 1), (f.charged -= r.amount), (f.refunded += r.amount);
    if (r.kind === 'settle') (f.charged -= r.amount), (f.settled += r.amount);
  }
  return f;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** RFC 4180: fields split on commas, quoted fields may hold commas, CRLF and doubled quotes; lines end in CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' && field === '') {
      for (i++; ; i++) {
        assert.ok(i < text.length, 'a quoted field is closed');
        if (text[i] === '"' && text[i + 1] === '"') (field += '"'), i++;
        else if (text[i] === '"') break;
        else field += text[i];
      }
      i++;
      assert.ok(text[i] === ',' || text[i] === '\r', `a quoted field ends at a comma or a line end (at ${i})`);
    } else if (c === ',') row.push(field), (field = ''), i++;
    else if (c === '\r') {
      assert.equal(text[i + 1], '\n', 'lines end in CRLF');
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), (i += 2);
    } else {
      assert.ok(c !== '"' && c !== '\n', `a bare quote or LF only inside a quoted field (at ${i})`);
      (field += c), i++;
    }
  }
  assert.deepEqual([row, field], [[], ''], 'the last line ends in CRLF');
  return rows;
}

describe('admin routes for usage', () => {
  let h: TaskHarness;
  const ids = { a: '', b: '' };
  let ledger: LedgerEntry[] = [];

  const admin = async (path: string, key = ADMIN_KEY): Promise<JsonAnswer> =>
    readAnswer(await fetch(h.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} }));
  const refused = (r: JsonAnswer, status: number, code: string, param = '') => {
    assert.equal(r.status, status, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.param], [code, param], r.text);
  };

  before(async () => {
    h = await startTaskHarness({ adminKey: ADMIN_KEY, finishMs: 200, pollMs: 50 });
    const token = async (name: string) => {
      const key = generateKey();
      const t = await h.store.createToken({ name, keyHash: hashKey(key), group: 'default', models: null, quota: null });
      return { key, id: t.id, auth: { authorization: `Bearer ${key}` } };
    };
    const a = await token(NAME_A);
    const b = await token(NAME_B);
    Object.assign(ids, { a: a.id, b: b.id });
    const path = `/v1beta/models/${IMAGE_MODEL}:generateContent`;
    // A: 1 + 2 charged; a request the vendor refuses is refunded its 1.
    assert.equal((await h.post(path, image('1K'), a.auth)).status, 200);
    assert.equal((await h.post(path, image('2K'), a.auth)).status, 200);
    assert.equal((await h.post(path, image('1K', 'x [sim:fault=400]'), a.auth)).status, 400);
    // B: 1 for an image; a task of 3 completed; a task of 3 the vendor fails, refunded.
    assert.equal((await h.post(path, image('1K'), b.auth)).status, 200);
    const done = await h.post('/v1/videos', video('a paper boat'), b.auth);
    const failed = await h.post('/v1/videos', video('doomed [sim:fail=content_policy]'), b.auth);
    assert.deepEqual([done.status, failed.status], [200, 200], done.text + failed.text);
    await h.waitFor(done.json.id, (t) => t.status === 'completed', { key: b.key });
    await h.waitFor(failed.json.id, (t) => t.status === 'failed', { key: b.key });
    ledger = [...(await h.store.ledger(a.id, null, 100)), ...(await h.store.ledger(b.id, null, 100))];
  });
  after(() => h.close());

  test('the figures are those of the ledger: in total, by token and by model (largest spend first), by day', async () => {
    const of = (pred: (r: LedgerEntry) => boolean) => figuresOf(ledger.filter(pred));
    // What the requests were charged, as the prices say, and as the ledger holds it.
    assert.deepEqual(
      of((r) => r.tokenId === ids.a),
      { requests: 2, charged: 3, refunded: 1, settled: 0 },
    );
    assert.deepEqual(
      of((r) => r.tokenId === ids.b),
      { requests: 2, charged: 4, refunded: 3, settled: 0 },
    );
    const from = utcDay(Date.now() - 2 * DAY);
    const to = utcDay(Date.now() + DAY);
    const r = await admin(`/admin/usage?from=${from}&to=${to}`);
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type')!, /^application\/json/);
    const days = [0, 1, 2].map((i) => utcDay(Date.parse(from) + i * DAY));
    assert.deepEqual(r.json, {
      from: Date.parse(from),
      to: Date.parse(to),
      totals: of(() => true),
      by_token: [
        { token_id: ids.b, name: NAME_B, ...of((x) => x.tokenId === ids.b) },
        { token_id: ids.a, name: NAME_A, ...of((x) => x.tokenId === ids.a) },
      ],
      by_model: [
        { model: IMAGE_MODEL, ...of((x) => x.model === IMAGE_MODEL) },
        { model: VIDEO_MODEL, ...of((x) => x.model === VIDEO_MODEL) },
      ],
      // The days without spend are there, at zero (the requests ran today, or from yesterday on at midnight).
      by_day: days.map((day) => ({ day, ...of((x) => utcDay(x.at) === day) })),
    });
    assert.deepEqual(r.json.totals, { requests: 4, charged: 7, refunded: 4, settled: 0 });
    assert.deepEqual(r.json.by_day[0], { day: days[0], requests: 0, charged: 0, refunded: 0, settled: 0 }, 'a day without spend');
    assert.deepEqual(
      r.json.by_model.map((m: Figures) => m.charged),
      [4, 3],
    );
  });

  test('filters: one token, one model, both; unix ms bounds; the default range is the last 30 days', async () => {
    const a = await admin(`/admin/usage?token=${ids.a}`);
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.json.totals, { requests: 2, charged: 3, refunded: 1, settled: 0 });
    assert.deepEqual(
      a.json.by_token.map((t: { token_id: string }) => t.token_id),
      [ids.a],
    );
    assert.deepEqual(
      a.json.by_model.map((m: { model: string }) => m.model),
      [IMAGE_MODEL],
    );
    assert.equal(a.json.to - a.json.from, 30 * DAY, 'default: 30 days up to now');
    assert.ok(Math.abs(a.json.to - Date.now()) < 60_000);
    assert.equal(a.json.by_day.length, a.json.from % DAY === 0 ? 30 : 31, 'every day of the range, the first one partly');
    assert.equal(a.json.by_day.at(-1).day, utcDay(a.json.to - 1));

    const video = await admin(`/admin/usage?model=${VIDEO_MODEL}`);
    assert.deepEqual(video.json.totals, figuresOf(ledger.filter((x) => x.model === VIDEO_MODEL)));
    assert.deepEqual(video.json.totals, { requests: 1, charged: 3, refunded: 3, settled: 0 });
    assert.deepEqual(
      video.json.by_token.map((t: { token_id: string }) => t.token_id),
      [ids.b],
    );

    const none = await admin(`/admin/usage?token=${ids.a}&model=${VIDEO_MODEL}`);
    assert.deepEqual([none.json.totals, none.json.by_token, none.json.by_model], [{ requests: 0, charged: 0, refunded: 0, settled: 0 }, [], []]);
    assert.ok(none.json.by_day.every((d: Figures) => d.charged === 0 && d.requests === 0));

    // Unix ms: a range that ends before the first ledger row holds nothing; one from it holds everything.
    const first = Math.min(...ledger.map((x) => x.at));
    const last = Math.max(...ledger.map((x) => x.at));
    const before = await admin(`/admin/usage?from=${first - DAY}&to=${first}`);
    assert.deepEqual([before.json.from, before.json.to, before.json.totals.charged, before.json.by_token], [first - DAY, first, 0, []]);
    const all = await admin(`/admin/usage?from=${first}&to=${last + 1}`);
    assert.deepEqual(all.json.totals, figuresOf(ledger));
  });

  test('bad parameters are 400 invalid_request naming the parameter, on both routes', async () => {
    const cases: [string, string][] = [
      ['from=yesterday', 'from'],
      ['from=2026-13-01', 'from'],
      ['from=2026-02-30', 'from'],
      ['from=2026-1-5', 'from'],
      ['from=1.5', 'from'],
      ['from=-5', 'from'],
      ['from=99999999999999999', 'from'],
      ['to=2026-01-01T00:00:00Z', 'to'],
      ['from=2026-01-02&to=2026-01-02', 'to'],
      ['from=2026-01-03&to=2026-01-02', 'to'],
      ['from=2025-01-01&to=2026-01-03', 'to'],
      [`from=${utcDay(Date.now() + 2 * DAY)}`, 'from'],
      [`token=${'x'.repeat(300)}`, 'token'],
      [`model=${'m'.repeat(300)}`, 'model'],
    ];
    for (const [query, param] of cases) {
      refused(await admin(`/admin/usage?${query}`), 400, 'invalid_request', param);
      refused(await admin(`/admin/usage.csv?${query}`), 400, 'invalid_request', param);
    }
    const leap = await admin('/admin/usage?from=2024-01-01&to=2025-01-01');
    assert.equal(leap.status, 200, '366 days (a leap year) is allowed');
    assert.equal(leap.json.by_day.length, 366);
  });

  test('the admin key is required', async () => {
    for (const path of ['/admin/usage', '/admin/usage.csv']) {
      refused(await admin(path, ''), 401, 'invalid_api_key');
      refused(await admin(path, 'not-the-admin-key'), 401, 'invalid_api_key');
      refused(await admin(`${path}?from=nonsense`, ''), 401, 'invalid_api_key');
    }
    const post = await readAnswer(await fetch(h.url + '/admin/usage', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } }));
    assert.equal(post.status, 405);
  });

  test('CSV: a file of one line per day × token × model, quoted as RFC 4180, formulas guarded; a deleted token keeps its id and loses its name', async () => {
    const from = utcDay(Date.now() - DAY);
    const to = utcDay(Date.now() + DAY);
    const res = await admin(`/admin/usage.csv?from=${from}&to=${to}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(res.headers.get('content-disposition'), `attachment; filename="usage-${from}-${to}.csv"`);
    const rows = parseCsv(res.text);
    assert.deepEqual(rows[0], ['day', 'token_id', 'token_name', 'model', 'requests', 'charged', 'refunded', 'settled']);
    const expected: string[][] = [];
    const keys = [...new Set(ledger.map((x) => `${utcDay(x.at)}\u0000${x.tokenId}\u0000${x.model}`))].sort();
    for (const k of keys) {
      const [day, tokenId, model] = k.split('\u0000') as [string, string, string];
      const f = figuresOf(ledger.filter((x) => utcDay(x.at) === day && x.tokenId === tokenId && x.model === model));
      const name = tokenId === ids.a ? NAME_A : `'${NAME_B}`;
      expected.push([day, tokenId, name, model, String(f.requests), String(f.charged), String(f.refunded), String(f.settled)]);
    }
    assert.deepEqual(rows.slice(1), expected, 'the names come back whole (A) or guarded (B)');
    assert.ok(res.text.includes('"Acme, ""R&D""\nteam"'), 'quoted, the quotes doubled');
    assert.ok(res.text.includes(`"'=HYPERLINK(""http://evil.example"",""x"")"`), 'prefixed with a quote mark, then quoted');

    const narrow = await admin(`/admin/usage.csv?from=${Date.now() - 1000}&to=${Date.parse(to)}&token=${ids.b}&model=${IMAGE_MODEL}`);
    assert.match(
      narrow.headers.get('content-disposition')!,
      new RegExp(`^attachment; filename="usage-[0-9]+-${to}\\.csv"$`),
      'a bound not at midnight is named by its ms',
    );

    assert.equal((await fetch(`${h.url}/admin/tokens/${ids.a}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status, 200);
    const json = await admin(`/admin/usage?from=${from}&to=${to}`);
    assert.deepEqual(
      json.json.by_token.find((t: { token_id: string }) => t.token_id === ids.a),
      { token_id: ids.a, name: null, ...figuresOf(ledger.filter((x) => x.tokenId === ids.a)) },
    );
    const csv = parseCsv((await admin(`/admin/usage.csv?from=${from}&to=${to}`)).text);
    assert.ok(
      csv
        .slice(1)
        .filter((r) => r[1] === ids.a)
        .every((r) => r[2] === ''),
      'no name: an empty cell',
    );
    assert.ok(csv.some((r) => r[1] === ids.a));
  });
});
